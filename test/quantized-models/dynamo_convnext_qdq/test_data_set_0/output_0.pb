
Blinear_6JP§Q¾§Q¼ÎÐŽ>&I¾&I>uXœ½ÙJ¾FpÆ½c†m>â}Þ¾xiº=Iä½uX>§Q=Ü[¢=ˆð=f´½@NŠ=wÒ=ßl@;
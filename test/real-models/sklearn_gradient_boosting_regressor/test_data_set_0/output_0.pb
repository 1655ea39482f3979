BvariableJ@CÁ§Bn©ÓBKÈ9C6bËB8ß?Cœ\èB28(Cl KCâGÇBQ‡äBˆŒyCiC"oÆB:
CM¹B
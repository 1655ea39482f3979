BvariableJ@¼#CÅ B
S”B?C@«ûBSiOCLËBˆTCğ(C.èôB˜c÷BİƒCŒ}C,zÍBdWåBÏÎ‡B
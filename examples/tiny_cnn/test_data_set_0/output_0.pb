
BprobabilitiesJ(ñ¨‘=¾^s>mÜ¦>¦ÜÅ<F µ=ú¾1=¢Da=ó•Ò=‘ÖÄ<.á<
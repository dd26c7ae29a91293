C->M: 5.96 ms/answer
M->C: 4.92 ms/answer
parseC: 5.26 ms/answer
parseM: 4.21 ms/answer
Traceback (most recent call last):
  File "/tmp/lb/inproc.py", line 32, in <module>
    b, body, c = cases[sys.argv[1]]
                 ~~~~~^^^^^^^^^^^^^
KeyError: 'M-'

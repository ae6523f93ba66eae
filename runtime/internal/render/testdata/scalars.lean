s: plain text
q: "true"
n: "42"
e: ""
h: "a # not a comment"
t: " padded "
u: déjà vu
big: 123456789012345678901234567890
f: 1.50
neg: -0.0
k-1: 1
"with space": 2
"": 3

# The seed plugin's self-test: Sage's preparser turns R.<x> into a ring.
R.<x> = QQ[]
print(factor(x^4 - 1))

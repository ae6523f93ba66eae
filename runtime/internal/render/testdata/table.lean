deals[3]{id|title|company|stage|amount|currency}:  # id: Deal id, e.g. D-2001.; amount: Value in the deal's currency.
  D-2001|Acme renewal|Acme, Inc.|proposal|12000|EUR
  D-2002|"Globex | pilot"|Globex|won|4500.50|USD
  D-2003|""|Initech|lead|0|GBP
total: 3  # Matches before the limit was applied.

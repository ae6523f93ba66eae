id: C-1001  # Contact id, e.g. C-1001.
name: Ada Lovelace
address:  # Postal address.
  street: 12 Analytical Way
  city: London
  geo:
    lat: 51.5072  # Latitude in degrees.
    lon: -0.1276
tags: [vip, engine, "a, b"]
notes: []
meta: {}
history:
  - at: 2026-01-02T10:00:00Z
    event: created
    by:
      id: U-1
      role: admin
  - "imported: csv"
  - - x
    - y: 1

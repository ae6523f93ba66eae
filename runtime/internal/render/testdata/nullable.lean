[3]{id|closed_at|owner|discount}:  # closed_at: When the deal closed; null while open.; owner: Owner, or null when unassigned.; discount: A fraction between 0 and 1.
  D-1|null|U-7|null
  D-2|2026-03-01|null|
  D-3||"null"|0.1

events:
  - kind: email
    to: ada@example.com  # Recipient address.
    subject: Renewal: next steps
  - kind: call
    duration_s: 300  # Call length in seconds.
    outcome:
      result: callback
      at: 2026-04-01
  - kind: note
    text: "line one\nline two"
result:
  ok: true
  value: [1, 2.5, -3e2, "4", true, null]  # The value, of any type.

package crm

import "encoding/json"

// The tool schemas are written out by hand, as a real server's would be, so
// the snapshot shows exactly what a model and the generator are given.

const stageEnum = `["lead", "qualified", "proposal", "negotiation", "won", "lost"]`

const contactSchema = `{
  "type": "object",
  "properties": {
    "id": {"type": "string", "description": "Contact id, e.g. C-1001."},
    "name": {"type": "string"},
    "email": {"type": "string", "format": "email"},
    "company": {"type": "string"},
    "owner": {"type": "string", "description": "User id of the account owner."},
    "tags": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["id", "name", "email", "company", "owner", "tags"],
  "additionalProperties": false
}`

const dealSchema = `{
  "type": "object",
  "properties": {
    "id": {"type": "string", "description": "Deal id, e.g. D-2001."},
    "title": {"type": "string"},
    "contact_id": {"type": "string"},
    "stage": {"type": "string", "enum": ` + stageEnum + `},
    "amount": {"type": "number", "minimum": 0},
    "currency": {"type": "string", "enum": ["EUR", "GBP", "USD"]},
    "owner": {"type": "string"},
    "notes": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["id", "title", "contact_id", "stage", "amount", "currency", "owner", "notes"],
  "additionalProperties": false
}`

var schemas = map[string]struct{ in, out string }{
	"get_contact": {
		in: `{
  "type": "object",
  "properties": {
    "contact_id": {"type": "string", "pattern": "^C-[0-9]{4}$", "description": "Contact id, e.g. C-1001."}
  },
  "required": ["contact_id"],
  "additionalProperties": false
}`,
		out: contactSchema,
	},
	"get_deal": {
		in: `{
  "type": "object",
  "properties": {
    "deal_id": {"type": "string", "pattern": "^D-[0-9]{4}$", "description": "Deal id, e.g. D-2001."}
  },
  "required": ["deal_id"],
  "additionalProperties": false
}`,
		out: dealSchema,
	},
	"search_deals": {
		in: `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "description": "Case-insensitive text matched against deal titles and company names."},
    "stage": {"type": "string", "enum": ` + stageEnum + `},
    "min_amount": {"type": "number", "minimum": 0},
    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
  },
  "additionalProperties": false
}`,
		out: `{
  "type": "object",
  "properties": {
    "deals": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string"},
          "title": {"type": "string"},
          "company": {"type": "string"},
          "stage": {"type": "string", "enum": ` + stageEnum + `},
          "amount": {"type": "number"},
          "currency": {"type": "string"}
        },
        "required": ["id", "title", "company", "stage", "amount", "currency"],
        "additionalProperties": false
      }
    },
    "total": {"type": "integer", "minimum": 0, "description": "Matches before the limit was applied."}
  },
  "required": ["deals", "total"],
  "additionalProperties": false
}`,
	},
	"update_deal": {
		in: `{
  "type": "object",
  "properties": {
    "caller_token": {"type": "string", "minLength": 1, "description": "Token identifying the user on whose behalf the change is made."},
    "deal_id": {"type": "string", "pattern": "^D-[0-9]{4}$"},
    "stage": {"type": "string", "enum": ` + stageEnum + `},
    "amount": {"type": "number", "minimum": 0},
    "note": {"type": "string", "maxLength": 500, "description": "Appended to the deal's notes."}
  },
  "required": ["caller_token", "deal_id"],
  "additionalProperties": false
}`,
		out: dealSchema,
	},
	"send_email": {
		in: `{
  "type": "object",
  "properties": {
    "caller_token": {"type": "string", "minLength": 1, "description": "Token identifying the sender."},
    "contact_id": {"type": "string", "pattern": "^C-[0-9]{4}$"},
    "subject": {"type": "string", "minLength": 1, "maxLength": 200},
    "body": {"type": "string", "minLength": 1}
  },
  "required": ["caller_token", "contact_id", "subject", "body"],
  "additionalProperties": false
}`,
		out: `{
  "type": "object",
  "properties": {
    "message_id": {"type": "string"},
    "to": {"type": "string", "format": "email"},
    "status": {"type": "string", "enum": ["queued"]}
  },
  "required": ["message_id", "to", "status"],
  "additionalProperties": false
}`,
	},
	"pipeline_chart": {
		in: `{"type": "object", "properties": {}, "additionalProperties": false}`,
	},
	"export_contacts": {
		in: `{
  "type": "object",
  "properties": {
    "owner": {"type": "string", "description": "Only contacts owned by this user id."}
  }
}`,
	},
}

func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

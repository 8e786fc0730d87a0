package seed

// The generator of sample rows: a value is a pure function of (table, column, row), shaped by
// the column's type and name (emails that belong to the row's person, later timestamps for
// later ids, plausible prices), so the emulator's sample data is realistic and deterministic.

import (
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/agentplane/agentplane/internal/datasource"
)

// sampleEpoch is the first sample row's timestamp; later rows are later, so ids and times agree.
var sampleEpoch = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

func hash(parts ...any) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		fmt.Fprint(h, p, "\x00")
	}
	return h.Sum64()
}

// typeClass maps a database or JSON type name to the kind of value a sample column holds.
func typeClass(typ string) string {
	t := strings.ToLower(strings.TrimSpace(typ))
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	switch {
	case strings.HasSuffix(t, "[]") || t == "array":
		return "array"
	}
	switch t {
	case "int", "integer", "int2", "int4", "int8", "smallint", "bigint", "tinyint", "mediumint", "serial",
		"bigserial", "smallserial", "unsigned", "int unsigned", "bigint unsigned":
		return "int"
	case "numeric", "decimal", "real", "float", "float4", "float8", "double", "double precision", "money", "number":
		return "num"
	case "bool", "boolean":
		return "bool"
	case "timestamp", "timestamptz", "timestamp with time zone", "timestamp without time zone", "datetime":
		return "ts"
	case "date":
		return "date"
	case "time", "timetz", "time with time zone", "time without time zone":
		return "time"
	case "uuid":
		return "uuid"
	case "json", "jsonb", "object":
		return "json"
	}
	return "text"
}

func formatTime(t time.Time, typ string) string {
	switch typeClass(typ) {
	case "date":
		return t.Format("2006-01-02")
	case "time":
		return t.Format("15:04:05")
	}
	return t.Format(time.RFC3339)
}

var (
	firstNames = []string{"Ada", "Grace", "Alan", "Katherine", "Linus", "Margaret", "Edsger", "Barbara",
		"Dennis", "Frances", "Ken", "Radia", "Tim", "Hedy", "John", "Sophie", "Donald", "Anita", "Guido", "Shafi"}
	lastNames = []string{"Lovelace", "Hopper", "Turing", "Johnson", "Torvalds", "Hamilton", "Dijkstra", "Liskov",
		"Ritchie", "Allen", "Thompson", "Perlman", "Berners-Lee", "Lamarr", "McCarthy", "Wilson", "Knuth", "Borg", "van Rossum", "Goldwasser"}
	countries  = []string{"US", "DE", "FR", "GB", "JP", "BR", "IN", "CA", "NL", "SE", "ES", "AU"}
	cities     = []string{"Berlin", "Lisbon", "Toronto", "Osaka", "Austin", "Lyon", "Melbourne", "Utrecht", "Malmo", "Pune"}
	currencies = []string{"USD", "EUR", "GBP", "JPY", "CAD"}
	statuses   = []string{"pending", "paid", "shipped", "delivered", "delivered", "delivered", "cancelled", "refunded"}
	categories = []string{"coffee", "tea", "equipment", "accessories", "gifts"}
	products   = []string{"Espresso Beans 1kg", "Ceramic Pour-Over Dripper", "Gooseneck Kettle", "Sencha Green Tea",
		"Burr Grinder", "Glass Carafe 600ml", "Cold Brew Bottle", "Milk Frother", "Earl Grey Loose Leaf", "Travel Mug",
		"Paper Filters (100)", "Digital Scale", "Matcha Whisk Set", "Decaf Colombia 500g", "Gift Card"}
	companies = []string{"Acme Corp", "Globex", "Initech", "Umbrella Retail", "Hooli", "Stark Supplies", "Wayne Foods", "Soylent Labs"}
	sentences = []string{"Arrived on time and well packed.", "Customer asked about bulk pricing.",
		"Reordered after the trial period.", "Requested a gift receipt.", "Follow up next quarter.", "No issues reported."}
	roles  = []string{"member", "member", "member", "admin", "viewer"}
	kinds  = []string{"standard", "standard", "premium", "trial"}
	colors = []string{"red", "green", "blue", "black", "white", "amber"}
)

func pick(list []string, h uint64) string { return list[h%uint64(len(list))] }

// person is the row's person, shared by its name and email columns so they agree.
func person(table string, i int) (first, last string) {
	h := hash(table, "person", i)
	return pick(firstNames, h), pick(lastNames, h>>16)
}

// generator returns the sample value of a column for row i: a pure function of the table, the
// column and the row, shaped by the column's type and name.
func generator(table string, f datasource.Field) func(i int) any {
	name := strings.ToLower(f.Name)
	class := typeClass(f.Type)
	return func(i int) any {
		h := hash(table, name, i)
		if f.Nullable && h%5 == 0 {
			return nil
		}
		switch class {
		case "int":
			return sampleInt(name, i, h)
		case "num":
			return sampleNum(name, h)
		case "bool":
			if strings.Contains(name, "active") || strings.Contains(name, "enabled") || strings.Contains(name, "verified") {
				return h%10 != 0
			}
			return h%2 == 0
		case "ts", "date", "time":
			return formatTime(sampleTime(name, i, h), f.Type)
		case "uuid":
			h2 := hash(table, name, i, "uuid")
			return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", uint32(h), uint16(h>>32), uint16(h>>48)&0xfff,
				uint16(h2)&0x3fff|0x8000, h2>>16&0xffffffffffff)
		case "json":
			return map[string]any{"source": pick([]string{"web", "mobile", "api", "import"}, h), "seq": i + 1}
		case "array":
			return []any{pick(categories, h), pick(colors, h>>8)}
		}
		return sampleText(table, name, i, h)
	}
}

func sampleInt(name string, i int, h uint64) any {
	switch {
	case name == "id":
		return int64(i + 1)
	case strings.HasSuffix(name, "_id"):
		return int64(1 + h%datasource.DefaultTableRows)
	case strings.Contains(name, "cents") || strings.Contains(name, "price") || strings.Contains(name, "amount") ||
		strings.Contains(name, "total") || strings.Contains(name, "cost") || strings.Contains(name, "balance"):
		return int64(199 + h%49800)
	case name == "stock" || strings.Contains(name, "inventory"):
		return int64(h % 500)
	case strings.Contains(name, "quantity") || name == "qty" || strings.HasSuffix(name, "count") || strings.Contains(name, "units"):
		return int64(1 + h%10)
	case name == "age":
		return int64(18 + h%60)
	case name == "year":
		return int64(2015 + h%11)
	case strings.Contains(name, "rating") || strings.Contains(name, "score") || strings.Contains(name, "stars"):
		return int64(1 + h%5)
	case name == "port":
		return int64(1024 + h%60000)
	}
	return int64(h % 1000)
}

func sampleNum(name string, h uint64) any {
	switch {
	case strings.Contains(name, "rate") || strings.Contains(name, "percent") || strings.Contains(name, "ratio"):
		return float64(h%10000) / 100
	case strings.Contains(name, "rating") || strings.Contains(name, "score"):
		return float64(10+h%41) / 10
	case strings.HasPrefix(name, "lat"):
		return math.Round((float64(h%18000)/100-90)*1e4) / 1e4
	case strings.HasPrefix(name, "lon") || strings.HasPrefix(name, "lng"):
		return math.Round((float64(h%36000)/100-180)*1e4) / 1e4
	case strings.Contains(name, "weight"):
		return float64(1+h%5000) / 100
	}
	return float64(199+h%49800) / 100 // prices, amounts, totals
}

// sampleTime spaces rows about 7 hours apart from sampleEpoch; "later" columns (updated, shipped,
// delivered, …) fall 1–72 hours after the row's own time, birth dates decades earlier.
func sampleTime(name string, i int, h uint64) time.Time {
	t := sampleEpoch.Add(time.Duration(i)*(7*time.Hour+13*time.Minute) + time.Duration(h%3600)*time.Second)
	switch {
	case strings.Contains(name, "birth") || name == "dob":
		return time.Date(1960+int(h%45), time.Month(1+h%12), 1+int(h>>8%28), 0, 0, 0, 0, time.UTC)
	case strings.HasPrefix(name, "updated") || strings.HasPrefix(name, "shipped") || strings.HasPrefix(name, "delivered") ||
		strings.HasPrefix(name, "completed") || strings.HasPrefix(name, "closed") || strings.HasPrefix(name, "last_"):
		return t.Add(time.Duration(1+h%72) * time.Hour)
	case strings.HasPrefix(name, "expires") || strings.HasPrefix(name, "due"):
		return t.Add(time.Duration(30+h%335) * 24 * time.Hour)
	}
	return t
}

func sampleText(table, name string, i int, h uint64) any {
	first, last := person(table, i)
	compact := strings.ToLower(strings.NewReplacer(" ", "", "-", "").Replace(last))
	tbl := strings.ToLower(table)
	isProduct := strings.Contains(tbl, "product") || strings.Contains(tbl, "item") || strings.Contains(tbl, "catalog") || strings.Contains(tbl, "inventory")
	isCompany := strings.Contains(tbl, "compan") || strings.Contains(tbl, "org") || strings.Contains(tbl, "account") || strings.Contains(tbl, "vendor")
	switch {
	case strings.Contains(name, "email"):
		return fmt.Sprintf("%s.%s%d@example.com", strings.ToLower(first), compact, i+1)
	case name == "first_name" || name == "given_name":
		return first
	case name == "last_name" || name == "family_name" || name == "surname":
		return last
	case name == "username" || name == "login" || name == "handle":
		return fmt.Sprintf("%s%s%d", strings.ToLower(first), compact[:1], i+1)
	case (name == "name" || name == "title" || name == "product_name") && isProduct:
		return pick(products, hash(table, "product", i))
	case (name == "name" || name == "company" || name == "company_name") && isCompany || name == "company":
		return pick(companies, h)
	case name == "name" || strings.HasSuffix(name, "full_name") || strings.HasSuffix(name, "_name") || name == "author" || name == "contact":
		return first + " " + last
	case strings.Contains(name, "country"):
		return pick(countries, h)
	case name == "city":
		return pick(cities, h)
	case strings.Contains(name, "currency"):
		return pick(currencies, h)
	case name == "status" || name == "state":
		return pick(statuses, h)
	case name == "category" || strings.HasSuffix(name, "_category"):
		return pick(categories, h)
	case name == "sku" || strings.HasSuffix(name, "_sku"):
		return fmt.Sprintf("SKU-%05d", 10000+hash(table, "product", i)%90000)
	case strings.Contains(name, "phone"):
		return fmt.Sprintf("+1-555-01%02d", h%100)
	case strings.Contains(name, "url") || name == "website" || name == "homepage" || name == "link":
		return fmt.Sprintf("https://example.com/%s/%d", tbl, i+1)
	case name == "slug":
		return strings.ToLower(strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(pick(products, hash(table, "product", i))))
	case strings.Contains(name, "ip"):
		return fmt.Sprintf("192.0.2.%d", 1+h%254)
	case name == "role":
		return pick(roles, h)
	case name == "type" || name == "kind" || name == "plan" || name == "tier":
		return pick(kinds, h)
	case strings.Contains(name, "color") || strings.Contains(name, "colour"):
		return pick(colors, h)
	case name == "title" || name == "subject":
		return fmt.Sprintf("%s #%d", strings.ToUpper(name[:1])+name[1:], i+1)
	case strings.Contains(name, "description") || strings.Contains(name, "note") || strings.Contains(name, "comment") || name == "body" || name == "message":
		return pick(sentences, h)
	case name == "code" || strings.HasSuffix(name, "_code"):
		return fmt.Sprintf("%s-%04d", strings.ToUpper(name[:1]), h%10000)
	}
	return fmt.Sprintf("%s %d", strings.ReplaceAll(name, "_", " "), i+1)
}

// defaultFields are the item fields of an HTTP source without sample_fields, by resource.
func defaultFields(resource string) []datasource.Field {
	r := strings.ToLower(resource)
	switch {
	case strings.Contains(r, "product") || strings.Contains(r, "item") || strings.Contains(r, "catalog") || strings.Contains(r, "inventory"):
		return fields("sku", "string", "name", "string", "category", "string", "price", "number", "stock", "integer")
	case strings.Contains(r, "user") || strings.Contains(r, "customer") || strings.Contains(r, "contact") || strings.Contains(r, "people"):
		return fields("id", "integer", "email", "string", "full_name", "string", "country", "string", "created_at", "timestamp")
	case strings.Contains(r, "order"):
		return fields("id", "integer", "status", "string", "total", "number", "currency", "string", "created_at", "timestamp")
	}
	return fields("id", "integer", "name", "string", "created_at", "timestamp")
}

// fields makes non-nullable fields of name, type pairs.
func fields(nameTypes ...string) []datasource.Field {
	out := make([]datasource.Field, 0, len(nameTypes)/2)
	for i := 0; i+1 < len(nameTypes); i += 2 {
		out = append(out, datasource.Field{Name: nameTypes[i], Type: nameTypes[i+1]})
	}
	return out
}

// typedValue converts a filter's text to the field's type when it parses.
func typedValue(v, typ string) any {
	switch typeClass(typ) {
	case "int":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case "num":
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	case "bool":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return v
}

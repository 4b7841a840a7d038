package sqlwork

import (
	"strconv"
	"time"
)

// The built-in "tpcw" data set: the seven TPC-W tables the profiling study
// (seed 001 §II-C..E) queries, with TPC-W's column names and row counts
// (NUM_ITEMS = scale items, NUM_EBS = scale ebs). Values are random but
// follow TPC-W's shapes; what statements need to find rows is fixed:
//
//   - every id column counts from 1: co_id 1..92, a_id 1..authors, i_id
//     1..items, c_id 1..customers, addr_id 1..addresses, o_id 1..orders;
//   - c_uname = "UN" + c_id (so a statement draws an existing user name with
//     {uniform: [1, customers], prefix: UN}), c_passwd = lower-case c_uname;
//   - i_subject is one of the 24 TPC-W subjects (tpcwSubjects);
//   - order o_id has 1 + (o_id-1) mod 5 lines, ol_id 1..that, so a new line
//     with ol_id 6 or more never collides with a generated one.

// Default TPC-W scale: the study's NUM_ITEMS and NUM_EBS (001 §II-C).
const (
	defaultItems  = 10000
	defaultEBs    = 100
	tpcwCountries = 92
)

// TPCWCounts returns the rows per table of the tpcw data set at a scale
// (keys items and ebs; missing or non-positive values take the defaults
// 10000 and 100), as TPC-W sizes them: customers = 2880 x ebs, addresses =
// 2 x customers, authors = items / 4, countries = 92, orders = 0.9 x
// customers, order lines 1 to 5 per order (3 on average).
func TPCWCounts(scale map[string]int64) map[string]int64 {
	items, ebs := tpcwScale(scale)
	customers := 2880 * ebs
	orders := customers * 9 / 10
	return map[string]int64{
		"country":    tpcwCountries,
		"author":     max(1, items/4),
		"item":       items,
		"customer":   customers,
		"address":    2 * customers,
		"orders":     orders,
		"order_line": orderLines(orders),
	}
}

func tpcwScale(scale map[string]int64) (items, ebs int64) {
	items, ebs = scale["items"], scale["ebs"]
	if items < 1 {
		items = defaultItems
	}
	if ebs < 1 {
		ebs = defaultEBs
	}
	return items, ebs
}

// linesOf is the number of lines of order o: 1, 2, 3, 4, 5, 1, 2, ...
func linesOf(o int64) int64 { return 1 + (o-1)%5 }

// orderLines sums linesOf over orders 1..n.
func orderLines(n int64) int64 {
	r := n % 5
	return n/5*15 + r*(r+1)/2
}

func num(name string) column { return column{name: name, typ: tInt} }
func str(name string, n int) column {
	return column{name: name, typ: tVarchar, size: n}
}
func money(name string, p, s int) column {
	return column{name: name, typ: tNumeric, size: p, scale: s}
}
func date(name string) column  { return column{name: name, typ: tDate} }
func stamp(name string) column { return column{name: name, typ: tTimestamp} }

var tpcwTables = []tableDef{
	{name: "country", pk: "co_id", cols: []column{
		num("co_id"), str("co_name", 50), money("co_exchange", 12, 6), str("co_currency", 18)}},
	{name: "author", pk: "a_id", cols: []column{
		num("a_id"), str("a_fname", 20), str("a_lname", 20), str("a_mname", 20), date("a_dob"), str("a_bio", 500)}},
	{name: "item", pk: "i_id", cols: []column{
		num("i_id"), str("i_title", 60), num("i_a_id"), date("i_pub_date"), str("i_publisher", 60),
		str("i_subject", 60), str("i_desc", 500),
		num("i_related1"), num("i_related2"), num("i_related3"), num("i_related4"), num("i_related5"),
		str("i_thumbnail", 40), str("i_image", 40), money("i_srp", 15, 2), money("i_cost", 15, 2),
		date("i_avail"), num("i_stock"), str("i_isbn", 13), num("i_page"), str("i_backing", 15),
		str("i_dimensions", 25)},
		indexes: []index{{name: "item_i_subject", cols: "i_subject"}, {name: "item_i_a_id", cols: "i_a_id"}}},
	{name: "customer", pk: "c_id", cols: []column{
		num("c_id"), str("c_uname", 20), str("c_passwd", 20), str("c_fname", 17), str("c_lname", 17),
		num("c_addr_id"), str("c_phone", 18), str("c_email", 50), date("c_since"), date("c_last_login"),
		stamp("c_login"), stamp("c_expiration"), money("c_discount", 5, 2), money("c_balance", 15, 2),
		money("c_ytd_pmt", 15, 2), date("c_birthdate"), str("c_data", 500)},
		indexes: []index{{name: "customer_c_uname", unique: true, cols: "c_uname"}}},
	{name: "address", pk: "addr_id", cols: []column{
		num("addr_id"), str("addr_street1", 40), str("addr_street2", 40), str("addr_city", 30),
		str("addr_state", 20), str("addr_zip", 10), num("addr_co_id")}},
	{name: "orders", pk: "o_id", cols: []column{
		num("o_id"), num("o_c_id"), stamp("o_date"), money("o_sub_total", 15, 2), money("o_tax", 15, 2),
		money("o_total", 15, 2), str("o_ship_type", 10), stamp("o_ship_date"), num("o_bill_addr_id"),
		num("o_ship_addr_id"), str("o_status", 15)}},
	{name: "order_line", pk: "ol_id, ol_o_id", cols: []column{
		num("ol_id"), num("ol_o_id"), num("ol_i_id"), num("ol_qty"), money("ol_discount", 5, 2),
		str("ol_comments", 110)}},
}

var tpcw = &builtinSet{tables: tpcwTables, loads: tpcwLoads}

// Stream numbers of the per-row generators, one per table.
const (
	sCountry = iota + 1
	sAuthor
	sItem
	sCustomer
	sAddress
	sOrders
	sOrderLine
)

// tpcwNow is the data set's "today": dates are drawn relative to it, not
// to the clock, so that the same seed gives the same rows on any day.
var tpcwNow = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

const day = 86400

func daysFrom(y int, m time.Month, d int) int64 {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / day
}

// rowBuf formats one row's text values in a reused buffer.
type rowBuf struct{ b []byte }

// s turns what f appends into a string.
func (rb *rowBuf) s(b []byte) string {
	rb.b = b[:0]
	return string(b)
}

func tpcwLoads(scale map[string]int64, seed uint64, _ Dialect) []*tableLoad {
	n := TPCWCounts(scale)
	items, authors, customers, addresses, orders := n["item"], n["author"], n["customer"], n["address"], n["orders"]
	today := tpcwNow / day
	mk := func(t tableDef, stream uint64, units, rows int64, fill func(r *rnd, id int64, rb *rowBuf, out *rowSink)) *tableLoad {
		return &tableLoad{
			name: t.name, cols: t.columnNames(), units: units, rows: rows, rowBytes: t.rowBytes(),
			newGen: func() func(int64, *rowSink) {
				rb := &rowBuf{}
				return func(u int64, out *rowSink) {
					r := rowRand(seed, stream, u)
					fill(&r, u+1, rb, out)
				}
			},
		}
	}
	tb := func(name string) tableDef {
		for _, t := range tpcwTables {
			if t.name == name {
				return t
			}
		}
		panic("sqlwork: no tpcw table " + name)
	}
	return []*tableLoad{
		mk(tb("country"), sCountry, tpcwCountries, tpcwCountries, func(r *rnd, id int64, rb *rowBuf, out *rowSink) {
			c := tpcwCountryList[id-1]
			row := out.row()
			row[0], row[1], row[3] = id, c[0], c[1]
			// An exchange rate against the dollar, 0.01 to 1000.
			row[2] = strconv.FormatFloat(float64(r.between(10000, 1000000000))/1e6, 'f', 6, 64)
		}),
		mk(tb("author"), sAuthor, authors, authors, func(r *rnd, id int64, rb *rowBuf, out *rowSink) {
			row := out.row()
			row[0] = id
			row[1] = rb.s(r.text(rb.b, 3, 20))
			row[2] = rb.s(r.text(rb.b, 1, 20))
			row[3] = rb.s(r.text(rb.b, 1, 20))
			row[4] = rb.s(appendDate(rb.b, r.between(daysFrom(1800, 1, 1), daysFrom(1990, 1, 1))))
			row[5] = rb.s(r.text(rb.b, 125, 500))
		}),
		mk(tb("item"), sItem, items, items, func(r *rnd, id int64, rb *rowBuf, out *rowSink) {
			row := out.row()
			row[0] = id
			row[1] = rb.s(r.text(rb.b, 14, 60))
			// Every author writes at least one item.
			if id <= authors {
				row[2] = id
			} else {
				row[2] = r.between(1, authors)
			}
			pub := r.between(daysFrom(1930, 1, 1), today)
			row[3] = rb.s(appendDate(rb.b, pub))
			row[4] = rb.s(r.text(rb.b, 14, 60))
			row[5] = r.pick(tpcwSubjects)
			row[6] = rb.s(r.text(rb.b, 100, 500))
			for k := 0; k < 5; k++ {
				rel := r.between(1, items)
				if rel == id && items > 1 {
					rel = rel%items + 1
				}
				row[7+k] = rel
			}
			dir := strconv.AppendInt(append(rb.b, "img"...), id%100, 10)
			row[12] = rb.s(append(strconv.AppendInt(append(dir, "/thumb_"...), id, 10), ".gif"...))
			dir = strconv.AppendInt(append(rb.b, "img"...), id%100, 10)
			row[13] = rb.s(append(strconv.AppendInt(append(dir, "/image_"...), id, 10), ".gif"...))
			srp := r.between(100, 999999)
			row[14] = rb.s(appendMoney(rb.b, srp))
			row[15] = rb.s(appendMoney(rb.b, srp*r.between(50, 100)/100))
			row[16] = rb.s(appendDate(rb.b, pub+r.between(1, 30)))
			row[17] = r.between(10, 30)
			row[18] = rb.s(r.text(rb.b, 13, 13))
			row[19] = r.between(20, 9999)
			row[20] = r.pick(tpcwBackings)
			b := appendMoney(rb.b, r.between(1, 9999))
			b = appendMoney(append(b, 'x'), r.between(1, 9999))
			row[21] = rb.s(appendMoney(append(b, 'x'), r.between(1, 9999)))
		}),
		mk(tb("customer"), sCustomer, customers, customers, func(r *rnd, id int64, rb *rowBuf, out *rowSink) {
			row := out.row()
			row[0] = id
			uname := rb.s(strconv.AppendInt(append(rb.b, "UN"...), id, 10))
			row[1] = uname
			row[2] = rb.s(strconv.AppendInt(append(rb.b, "un"...), id, 10))
			row[3] = rb.s(r.text(rb.b, 8, 15))
			lname := rb.s(r.text(rb.b, 8, 15))
			row[4] = lname
			row[5] = r.between(1, addresses)
			row[6] = rb.s(r.digits(rb.b, 9, 16))
			row[7] = rb.s(append(append(append(append(rb.b, uname...), '@'), lname...), ".com"...))
			since := today - r.between(1, 730)
			last := min(today, since+r.between(0, 60))
			row[8] = rb.s(appendDate(rb.b, since))
			row[9] = rb.s(appendDate(rb.b, last))
			login := last*day + r.between(0, day-1)
			row[10] = rb.s(appendTimestamp(rb.b, login))
			row[11] = rb.s(appendTimestamp(rb.b, login+2*3600))
			row[12] = rb.s(appendMoney(rb.b, r.between(0, 50)))
			row[13] = "0.00"
			row[14] = rb.s(appendMoney(rb.b, r.between(0, 99999)))
			row[15] = rb.s(appendDate(rb.b, r.between(daysFrom(1880, 1, 1), daysFrom(2000, 12, 31))))
			row[16] = rb.s(r.text(rb.b, 100, 500))
		}),
		mk(tb("address"), sAddress, addresses, addresses, func(r *rnd, id int64, rb *rowBuf, out *rowSink) {
			row := out.row()
			row[0] = id
			row[1] = rb.s(r.text(rb.b, 15, 40))
			row[2] = rb.s(r.text(rb.b, 15, 40))
			row[3] = rb.s(r.text(rb.b, 4, 30))
			row[4] = rb.s(r.text(rb.b, 2, 20))
			row[5] = rb.s(r.text(rb.b, 5, 10))
			row[6] = r.between(1, tpcwCountries)
		}),
		mk(tb("orders"), sOrders, orders, orders, func(r *rnd, id int64, rb *rowBuf, out *rowSink) {
			row := out.row()
			row[0] = id
			row[1] = r.between(1, customers)
			at := tpcwNow - r.between(day, 60*day)
			row[2] = rb.s(appendTimestamp(rb.b, at))
			sub := r.between(1000, 999999)
			tax := sub * 825 / 10000
			row[3] = rb.s(appendMoney(rb.b, sub))
			row[4] = rb.s(appendMoney(rb.b, tax))
			row[5] = rb.s(appendMoney(rb.b, sub+tax+300+100*linesOf(id)))
			row[6] = r.pick(tpcwShipTypes)
			row[7] = rb.s(appendTimestamp(rb.b, at+r.between(0, 7*day)))
			row[8] = r.between(1, addresses)
			row[9] = r.between(1, addresses)
			row[10] = r.pick(tpcwStatuses)
		}),
		// Units are orders; each yields its lines.
		mk(tb("order_line"), sOrderLine, orders, orderLines(orders), func(r *rnd, o int64, rb *rowBuf, out *rowSink) {
			for l := int64(1); l <= linesOf(o); l++ {
				row := out.row()
				row[0], row[1] = l, o
				row[2] = r.between(1, items)
				row[3] = r.between(1, 300)
				row[4] = rb.s(appendMoney(rb.b, r.between(0, 3)))
				row[5] = rb.s(r.text(rb.b, 20, 100))
			}
		}),
	}
}

// tpcwSubjects are TPC-W's 24 item subjects.
var tpcwSubjects = []string{
	"ARTS", "BIOGRAPHIES", "BUSINESS", "CHILDREN", "COMPUTERS", "COOKING", "HEALTH", "HISTORY",
	"HOME", "HUMOR", "LITERATURE", "MYSTERY", "NON-FICTION", "PARENTING", "POLITICS", "REFERENCE",
	"RELIGION", "ROMANCE", "SELF-HELP", "SCIENCE-NATURE", "SCIENCE-FICTION", "SPORTS", "YOUTH", "TRAVEL",
}

var (
	tpcwBackings  = []string{"HARDBACK", "PAPERBACK", "USED", "AUDIO", "LIMITED-EDITION"}
	tpcwShipTypes = []string{"AIR", "UPS", "FEDEX", "SHIP", "COURIER", "MAIL"}
	tpcwStatuses  = []string{"PROCESSING", "SHIPPED", "PENDING", "DENIED"}
)

// tpcwCountryList holds the 92 countries (name, currency) of the country
// table, co_id = position + 1.
var tpcwCountryList = [tpcwCountries][2]string{
	{"United States", "Dollars"}, {"United Kingdom", "Pounds"}, {"Canada", "Dollars"},
	{"Germany", "Euros"}, {"France", "Euros"}, {"Japan", "Yen"}, {"Netherlands", "Euros"},
	{"Italy", "Euros"}, {"Switzerland", "Francs"}, {"Australia", "Dollars"}, {"Algeria", "Dinars"},
	{"Argentina", "Pesos"}, {"Armenia", "Drams"}, {"Austria", "Euros"}, {"Azerbaijan", "Manat"},
	{"Bahamas", "Dollars"}, {"Bahrain", "Dinars"}, {"Bangladesh", "Taka"}, {"Barbados", "Dollars"},
	{"Belarus", "Rubles"}, {"Belgium", "Euros"}, {"Bermuda", "Dollars"}, {"Bolivia", "Bolivianos"},
	{"Botswana", "Pula"}, {"Brazil", "Reais"}, {"Bulgaria", "Leva"}, {"Cayman Islands", "Dollars"},
	{"Chad", "Francs"}, {"Chile", "Pesos"}, {"China", "Yuan"}, {"Colombia", "Pesos"},
	{"Croatia", "Euros"}, {"Cuba", "Pesos"}, {"Cyprus", "Euros"}, {"Czech Republic", "Koruny"},
	{"Denmark", "Kroner"}, {"Dominican Republic", "Pesos"}, {"Ecuador", "Dollars"},
	{"Egypt", "Pounds"}, {"El Salvador", "Dollars"}, {"Estonia", "Euros"}, {"Ethiopia", "Birr"},
	{"Fiji", "Dollars"}, {"Finland", "Euros"}, {"Gabon", "Francs"}, {"Ghana", "Cedis"},
	{"Greece", "Euros"}, {"Guatemala", "Quetzales"}, {"Hong Kong", "Dollars"}, {"Hungary", "Forint"},
	{"Iceland", "Kronur"}, {"India", "Rupees"}, {"Indonesia", "Rupiahs"}, {"Iran", "Rials"},
	{"Iraq", "Dinars"}, {"Ireland", "Euros"}, {"Israel", "Shekels"}, {"Jamaica", "Dollars"},
	{"Jordan", "Dinars"}, {"Kazakhstan", "Tenge"}, {"Kenya", "Shillings"}, {"Kuwait", "Dinars"},
	{"Lebanon", "Pounds"}, {"Luxembourg", "Euros"}, {"Malaysia", "Ringgits"}, {"Mauritius", "Rupees"},
	{"Mexico", "Pesos"}, {"Morocco", "Dirhams"}, {"New Zealand", "Dollars"}, {"Nigeria", "Naira"},
	{"Norway", "Kroner"}, {"Pakistan", "Rupees"}, {"Peru", "Soles"}, {"Philippines", "Pesos"},
	{"Poland", "Zlotych"}, {"Portugal", "Euros"}, {"Romania", "Lei"}, {"Saudi Arabia", "Riyals"},
	{"Singapore", "Dollars"}, {"Slovakia", "Euros"}, {"South Africa", "Rand"}, {"South Korea", "Won"},
	{"Spain", "Euros"}, {"Sweden", "Kronor"}, {"Taiwan", "Dollars"}, {"Thailand", "Baht"},
	{"Trinidad and Tobago", "Dollars"}, {"Turkey", "Lira"}, {"Ukraine", "Hryvnias"},
	{"Uruguay", "Pesos"}, {"Venezuela", "Bolivares"}, {"Zambia", "Kwacha"},
}

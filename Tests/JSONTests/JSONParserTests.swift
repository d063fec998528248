import JSON
import Testing

@Suite struct JSONParserTests {
    private func parse(_ text: String) -> JSONValue? { JSONValue.parse(Array(text.utf8)) }

    @Test func keepsIntegersApartFromNumbers() {
        #expect(parse(#"{"a": 12, "b": 1.5, "c": 1e3, "d": -7}"#) == ["a": 12, "b": .number(1.5), "c": .number(1000), "d": -7])
        #expect(parse("123456789012345678901234567890") == .number(Double("123456789012345678901234567890")!))
    }

    @Test func decodesEscapesAndSurrogatePairs() {
        #expect(parse(#""q\" b\\ s\/ n\n t\t u\u00e9 \ud83c\uddf9\ud83c\uddf7""#) == .string("q\" b\\ s/ n\n t\t ué 🇹🇷"))
    }

    @Test(arguments: [
        "", "{", "[1,]", #"{"a":1,}"#, "01", "1.", "tru", "nul", #"{"a":1} x"#, #"{"a":1,"a":2}"#, #""\x""#,
        #""\ud83c""#, "1e999", String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
    ])
    func refusesWhatIsNotStrictJSON(text: String) {
        #expect(parse(text) == nil)
    }

    @Test func roundTripsItsOwnEncoding() {
        let value: JSONValue = ["s": "line\nbreak \u{1} \"quoted\" ş", "n": .null, "list": [true, false, 0, -1, .number(0.25)], "o": [:]]
        #expect(JSONValue.parse(value.encoded()) == value)
    }

    @Test func accessorsReadTheShapes() {
        let value: JSONValue = ["k": "v", "i": 3]
        #expect(value["k"]?.string == "v")
        #expect(value["i"]?.int == 3)
        #expect(value["missing"] == nil)
        #expect(value.object?.count == 2)
        #expect(JSONValue.string("x")["k"] == nil)
        #expect([JSONValue.null, true, 1, .number(1.5), "s", [], [:]].map(\.typeName)
            == ["null", "boolean", "integer", "number", "string", "array", "object"])
    }
}

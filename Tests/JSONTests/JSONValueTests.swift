import Foundation
import JSON
import Testing

@Suite struct JSONValueTests {
    @Test func escapesWhatJSONRequiresAndKeepsUTF8() {
        let value: JSONValue = ["s": .string("q\" b\\ n\n t\t r\r \u{8}\u{C} nul\u{0} us\u{1F} del\u{7F} / ş 🇹🇷 \u{2028}")]
        let expected = #"{"s":"q\" b\\ n\n t\t r\r \b\f nul\u0000 us\u001f del"# + "\u{7F} / ş 🇹🇷 \u{2028}\"}"
        #expect(value.encodedString == expected)
    }

    @Test func sortsKeysByBytesAndEncodesEveryKind() {
        let value: JSONValue = ["b": [1, -2, true, false, .null], "a": "x", "B": [:], "é": [], "aa": 0]
        #expect(value.encodedString == #"{"B":{},"a":"x","aa":0,"b":[1,-2,true,false,null],"é":[]}"#)
    }

    @Test func roundTripsThroughFoundation() throws {
        let text = "ZWJ 👩‍👩‍👧‍👦 flag 🇺🇸 combining e\u{301} RTL ‏שלום\u{200F} ctrl \u{1}\u{1B} quote \" slash \\"
        let bytes = JSONValue.object(["k": .string(text), "n": .int(Int.max)]).encoded()
        #expect(String(validating: bytes, as: UTF8.self) != nil)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(parsed["k"] as? String == text)
        #expect((parsed["n"] as? NSNumber)?.int64Value == Int64.max)
    }

    /// The escaper copies the runs between escapes whole: escapes at either end, side by side, or none at all.
    @Test func escapesAtTheEdgesAndSideBySide() {
        #expect(JSONString.quoted("\"a\"") == #""\"a\"""#)
        #expect(JSONString.quoted("\n\u{1}\\") == #""\n\u0001\\""#)
        #expect(JSONString.quoted("") == #""""#)
        #expect(JSONString.quoted("fcm-token_0123:APA91b") == #""fcm-token_0123:APA91b""#)
        #expect(JSONString.escaped("say \"hi\"\n", quotes: false) == #"say "hi"\n"#)
        let bridged = NSString(string: "ş \"x\"") as String
        #expect(JSONString.quoted(bridged) == #""ş \"x\"""#)
    }

    @Test func escapedCountMatchesTheEncoding() {
        for text in ["plain", "\"\\", "\n\u{1}", "ş🇹🇷", ""] {
            let encoded = JSONValue.string(text).encoded()
            #expect(JSONString.escapedCount(utf8: text.utf8) == encoded.count - 2)
            #expect(JSONString.escapedCount(text) == encoded.count - 2)
            #expect(JSONString.escapedCount(utf8: Array(text.utf8)) == encoded.count - 2, "contiguous bytes")
            #expect(JSONString.escapedCount(utf8: AnySequence(text.utf8)) == encoded.count - 2, "a plain sequence")
        }
    }

    /// Decoded through `JSONDecoder` (a Codable member read one by one): the same value as the strict parser's, integers
    /// apart from numbers.
    @Test func decodesThroughJSONDecoderAsTheParserReadsIt() throws {
        let text = #"{"i": 12, "n": 1.5, "s": "ş \"x\"", "b": true, "z": null, "a": [1, "two", [false]], "o": {"k": -7}}"#
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(decoded == JSONValue.parse(Array(text.utf8)))
        #expect(decoded["i"] == .int(12) && decoded["n"] == .number(1.5) && decoded["z"] == .null)
        let members = try JSONDecoder().decode([String: JSONValue].self, from: Data(#"{"k": "v", "n": 3}"#.utf8))
        #expect(members == ["k": "v", "n": 3])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(JSONValue.self, from: Data("{".utf8)) }
    }
}

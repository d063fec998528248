import Foundation
import Testing

@testable import PushPayloads

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

    @Test func escapedCountMatchesTheEncoding() {
        for text in ["plain", "\"\\", "\n\u{1}", "ş🇹🇷", ""] {
            let encoded = JSONValue.string(text).encoded()
            #expect(JSONStringEscaping.escapedCount(utf8: text.utf8) == encoded.count - 2)
        }
    }
}

@Suite struct TextFittingTests {
    @Test func keepsTextThatFits() {
        #expect(TextFitting.truncate("abc", toEscapedBytes: 3) == "abc")
        #expect(TextFitting.truncate("", toEscapedBytes: 0) == "")
    }

    @Test func cutsOnGraphemeBoundariesWithAnEllipsis() {
        #expect(TextFitting.truncate("abcdef", toEscapedBytes: 5) == "ab…")
        #expect(TextFitting.truncate("ab cdef", toEscapedBytes: 6) == "ab…", "trailing space before the ellipsis is dropped")
        let family = "👩‍👩‍👧‍👦"
        #expect(TextFitting.truncate(family + family, toEscapedBytes: 30) == family + "…")
        #expect(TextFitting.truncate(family + family, toEscapedBytes: 27) == "…")
        #expect(TextFitting.truncate("🇹🇷🇺🇸", toEscapedBytes: 10) == "…", "a flag is never halved")
        #expect(TextFitting.truncate("e\u{301}e\u{301}x", toEscapedBytes: 6) == "e\u{301}…")
        #expect(TextFitting.truncate("e\u{301}e\u{301}x", toEscapedBytes: 5) == "…")
    }

    @Test func measuresEscapedBytes() {
        #expect(TextFitting.truncate("\"\"\"", toEscapedBytes: 6) == "\"\"\"")
        #expect(TextFitting.truncate("\"\"\"x", toEscapedBytes: 6) == "\"…")
        #expect(TextFitting.truncate("abc", toEscapedBytes: 2) == "")
    }

    @Test func trimsWhitespaceAndNewlines() {
        #expect(TextFitting.trimmed(" \n\t a b \u{3000}") == "a b")
        #expect(TextFitting.trimmed("\u{200F}x") == "\u{200F}x", "directional marks are content")
    }
}

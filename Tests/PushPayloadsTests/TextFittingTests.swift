import Testing

@testable import PushPayloads

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

    /// Text with a visible ASCII character at both ends is returned as is; every other shape is trimmed by
    /// characters, as before.
    @Test func trimsTheSameWithOrWithoutTheASCIIShortcut() {
        let cases: [(String, String)] = [
            ("a b", "a b"), ("Selin Kaya", "Selin Kaya"), ("x", "x"), ("~\u{3000}~", "~\u{3000}~"),
            ("x\r\n", "x"), ("\r\nx", "x"), ("e\u{301} ", "e\u{301}"), (" e\u{301}", "e\u{301}"), ("\u{3000}x\u{3000}", "x"),
            ("x\u{85}", "x"), ("\u{A0}x", "x"), ("é", "é"), ("", ""), (" ", ""), ("\u{0600}1", "\u{0600}1"),
        ]
        for (text, trimmed) in cases {
            #expect(TextFitting.trimmed(text) == trimmed, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }

    /// Short text fits without counting: no byte escapes to more than six.
    @Test func shortTextIsKeptWithoutCountingAndLongTextIsCounted() {
        #expect(TextFitting.truncate("\u{1}\u{1}", toEscapedBytes: 12) == "\u{1}\u{1}")
        #expect(TextFitting.truncate("\u{1}\u{1}", toEscapedBytes: 11) == "\u{1}…")
        #expect(TextFitting.truncate("\u{1}\u{1}\u{1}", toEscapedBytes: 15) == "\u{1}\u{1}…")
    }
}

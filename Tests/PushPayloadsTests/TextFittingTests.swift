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
}

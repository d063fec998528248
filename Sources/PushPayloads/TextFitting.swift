import JSON

/// Shortens display text to a byte budget measured as it will stand inside a JSON string, cutting only
/// between grapheme clusters (Swift `Character`s), so flags, ZWJ emoji sequences and letters with combining
/// marks are kept whole or dropped whole and the result is always valid UTF-8.
enum TextFitting {
    static let ellipsis = "…"
    private static let ellipsisBytes = JSONString.escapedCount(ellipsis)

    /// `text` itself when its escaped size fits `maxBytes`; otherwise the longest prefix of whole characters
    /// (trailing whitespace dropped) followed by "…" that fits; "" when not even the ellipsis fits.
    static func truncate(_ text: String, toEscapedBytes maxBytes: Int) -> String {
        // A byte takes at most 6 escaped (`\u00xx`): short texts fit without counting.
        if text.utf8.count <= maxBytes / 6 || JSONString.escapedCount(text) <= maxBytes { return text }
        guard maxBytes >= ellipsisBytes else { return "" }
        let room = maxBytes - ellipsisBytes
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let size = JSONString.escapedCount(utf8: text[index].utf8)
            if used + size > room { break }
            used += size
            end = text.index(after: index)
        }
        var prefix = text[..<end]
        while let last = prefix.last, last.isWhitespace { prefix = prefix.dropLast() }
        return String(prefix) + ellipsis
    }

    /// `text` without leading and trailing whitespace and newlines.
    static func trimmed(_ text: String) -> String {
        // Text that starts and ends with a visible ASCII character has nothing to trim: an ASCII byte is a
        // character of its own at either end (only CR LF joins two, and both are whitespace).
        if let first = text.utf8.first, let last = text.utf8.last, (0x21...0x7E).contains(first), (0x21...0x7E).contains(last) {
            return text
        }
        var slice = Substring(text)
        while let first = slice.first, first.isWhitespace { slice = slice.dropFirst() }
        while let last = slice.last, last.isWhitespace { slice = slice.dropLast() }
        return String(slice)
    }
}

import JSON

/// The two texts of a payload whose length the user controls: the stream title and the participants'
/// display names joined into one string.
struct VariableTexts: Sendable, Equatable {
    var title: String
    var names: String
}

/// Encodes a payload within a byte limit by shortening its title and names when needed.
enum PayloadFitting {
    /// `build(texts)`, at most `limit` bytes, with the texts the bytes were built from (a payload kept as a string
    /// map needs them). When the full texts do not fit, the bytes left after the fixed parts are split between title
    /// and names (each text's every occurrence counted, measured by probing `build`): a text that needs less than half
    /// keeps all it needs and the other gets the rest. Names are dropped whole from the end (an "…" item standing for
    /// them); the title is cut on a grapheme boundary.
    static func fit(
        title: String, names: [String], limit: Int, streamId: String, build: (VariableTexts) -> [UInt8]
    ) throws(PushPayloadError) -> (texts: VariableTexts, bytes: [UInt8]) {
        let texts = VariableTexts(title: title, names: names.joined(separator: separator))
        let full = build(texts)
        if full.count <= limit { return (texts, full) }

        let overhead = build(VariableTexts(title: "", names: "")).count
        let titleUses = build(VariableTexts(title: "x", names: "")).count - overhead
        let nameUses = build(VariableTexts(title: "", names: "x")).count - overhead
        let room = limit - overhead
        guard room >= 0 else {
            throw PushPayloadError(.payloadTooLarge, "fixed parts take \(overhead) of \(limit) bytes", streamId: streamId)
        }

        let titleNeeds = JSONString.escapedCount(texts.title) * titleUses
        let namesNeed = JSONString.escapedCount(texts.names) * nameUses
        let half = room / 2
        let titleRoom: Int
        let namesRoom: Int
        if titleNeeds <= half {
            (titleRoom, namesRoom) = (titleNeeds, room - titleNeeds)
        } else if namesNeed <= room - half {
            (titleRoom, namesRoom) = (room - namesNeed, namesNeed)
        } else {
            (titleRoom, namesRoom) = (half, room - half)
        }

        let fitted = VariableTexts(
            title: shorten(texts.title, room: titleRoom, uses: titleUses),
            names: nameUses > 0 ? fitNames(names, maxBytes: namesRoom / nameUses) : texts.names)
        let bytes = build(fitted)
        guard bytes.count <= limit else {
            throw PushPayloadError(.payloadTooLarge, "\(bytes.count) bytes after shortening (limit \(limit))", streamId: streamId)
        }
        return (fitted, bytes)
    }

    static let separator = " • "

    private static func shorten(_ text: String, room: Int, uses: Int) -> String {
        uses > 0 ? TextFitting.truncate(text, toEscapedBytes: room / uses) : text
    }

    /// As many leading names as fit with a final "…" item, e.g. "Selin Kaya • Mert Demir • …"; when not even
    /// the first name fits, the joined names cut on a grapheme boundary.
    private static func fitNames(_ names: [String], maxBytes: Int) -> String {
        let joined = names.joined(separator: separator)
        if JSONString.escapedCount(joined) <= maxBytes { return joined }
        let tail = separator + TextFitting.ellipsis
        var used = JSONString.escapedCount(tail)
        var kept: [String] = []
        for name in names {
            let size = JSONString.escapedCount(name) + (kept.isEmpty ? 0 : separator.utf8.count)
            if used + size > maxBytes { break }
            used += size
            kept.append(name)
        }
        return kept.isEmpty ? TextFitting.truncate(joined, toEscapedBytes: maxBytes) : kept.joined(separator: separator) + tail
    }
}

import JSON

/// Writes JSON text byte by byte, for request bodies whose exact shape matters (spliced payloads, key order).
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func raw(_ data: [UInt8]) { bytes.append(contentsOf: data) }

    /// A JSON string literal: quotes, backslashes and control characters escaped; other UTF-8 kept as is.
    mutating func string(_ value: String) { JSONString.appendQuoted(value, to: &bytes) }

    /// `,"name":"value"`: one more string member of an open object.
    mutating func member(_ name: StaticString, _ value: String) {
        raw(",\"")
        raw(name)
        raw("\":")
        string(value)
    }

    /// `{"k":"v",...}` with keys sorted, so equal dictionaries give equal bytes.
    mutating func object(_ pairs: [String: String]) {
        raw("{")
        for (index, key) in pairs.keys.sorted().enumerated() {
            if index > 0 { raw(",") }
            string(key)
            raw(":")
            string(pairs[key]!)
        }
        raw("}")
    }
}

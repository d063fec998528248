/// Writes compact JSON text straight into bytes, for hot paths where a `JSONValue` tree (a dictionary per object,
/// its keys sorted at every encoding) costs more than the text itself: push payloads and request bodies.
///
/// Members go in the order they are written. A caller that wants the canonical form of `JSONValue.encoded()`
/// (keys sorted by their UTF-8 bytes) writes them sorted; tests can check that by parsing the bytes and encoding
/// them again. Two styles, not to be mixed within one object: `raw` and `member` write exactly what they are
/// given (the caller places the commas); inside `object(_:)`, `key(_:)` places them.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    /// Whether the innermost object opened with `object(_:)` has no member yet.
    private var empty = true

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func raw(_ data: [UInt8]) { bytes.append(contentsOf: data) }

    /// A JSON string literal: quotes, backslashes and control characters escaped; other UTF-8 kept as is.
    public mutating func string(_ value: String) { JSONString.appendQuoted(value, to: &bytes) }

    /// An integer in decimal.
    public mutating func int(_ value: Int) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
        } else {
            bytes.append(contentsOf: String(value).utf8)
        }
    }

    /// `,"name":"value"`: one more string member of an object written with `raw`.
    public mutating func member(_ name: StaticString, _ value: String) {
        raw(",\"")
        raw(name)
        raw("\":")
        string(value)
    }

    /// `{"k":"v",...}` with keys sorted, so equal dictionaries give equal bytes.
    public mutating func object(_ pairs: [String: String]) {
        raw("{")
        for (index, key) in pairs.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { raw(",") }
            string(key)
            raw(":")
            string(pairs[key]!)
        }
        raw("}")
    }

    /// `{…}` around what `body` writes; each member starts with `key(_:)`, which puts the commas in.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        let outer = empty
        empty = true
        bytes.append(UInt8(ascii: "{"))
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        empty = outer
    }

    /// `"name":` of the next member of the object being written (after a comma unless it is the first).
    public mutating func key(_ name: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }
}

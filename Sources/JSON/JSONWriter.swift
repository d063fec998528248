/// Writes compact JSON text straight into bytes, for hot paths where a `JSONValue` tree (a dictionary per object,
/// its keys sorted at every encoding) costs more than the text itself: push payloads and request bodies.
///
/// Members go in the order they are written. A caller that wants the canonical form of `JSONValue.encoded()`
/// (keys sorted by their UTF-8 bytes) writes them sorted; tests can check that by parsing the bytes and encoding
/// them again. Objects are written with `object(_:)`, whose members start with `key(_:)` or are `member(_:_:)`:
/// they place the commas. `raw` writes exactly what it is given (an array's brackets and commas, ready-made JSON).
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

    /// `"name":"value"`: a string member of the object being written (after a comma unless it is the first).
    public mutating func member(_ name: StaticString, _ value: String) {
        key(name)
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

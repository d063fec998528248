extension JSONValue: Encodable {
    /// The compact encoding: object keys sorted by their UTF-8 bytes, strings kept as UTF-8 with only the escapes
    /// JSON requires (`JSONString`), so equal values give equal bytes (valid UTF-8 by construction). A
    /// non-finite `number` is written as `null`.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        append(to: &out)
        return out
    }

    /// The compact encoding as a string.
    public var encodedString: String { String(decoding: encoded(), as: UTF8.self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    private func append(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): out.append(contentsOf: String(value).utf8)
        case .number(let value): out.append(contentsOf: (value.isFinite ? "\(value)" : "null").utf8)
        case .string(let value): JSONString.appendQuoted(value, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.append(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONString.appendQuoted(key, to: &out)
                out.append(UInt8(ascii: ":"))
                members[key, default: .null].append(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}

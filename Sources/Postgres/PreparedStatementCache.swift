import CLibPQ

/// The statements one session has prepared, by text and declared parameter types. Bounded: past `limit`
/// statements nothing more is prepared, so ad-hoc SQL cannot grow the server's memory without end.
struct PreparedStatementCache {
    struct Key: Hashable {
        let sql: String
        let types: [Oid]
    }

    static let limit = 512
    private var names: [Key: String] = [:]
    private var next = 0

    func name(for key: Key) -> String? { names[key] }

    /// A fresh statement name, or `nil` when the cache is full.
    mutating func reserveName() -> String? {
        guard names.count < Self.limit else { return nil }
        next += 1
        return "countdown_\(next)"
    }

    mutating func insert(_ key: Key, name: String) { names[key] = name }

    /// Forgets everything (the session was reset or closed: the server dropped its statements).
    mutating func removeAll() {
        names.removeAll()
    }
}

/// The columns of a result: names in order, their types, and a lookup by name.
public struct PostgresColumns: Sendable {
    public let names: [String]
    public let types: [PostgresType]
    /// For results wider than `scanLimit` columns; narrower ones are searched in order (cheaper than hashing).
    private let indexByName: [String: Int]

    private static let scanLimit = 16

    init(names: [String], types: [PostgresType]) {
        self.names = names
        self.types = types
        var indexByName: [String: Int] = [:]
        if names.count > Self.scanLimit {
            for (index, name) in names.enumerated() where indexByName[name] == nil { indexByName[name] = index }
        }
        self.indexByName = indexByName
    }

    public var count: Int { names.count }

    /// Position of the first column called `name`.
    public func index(of name: String) -> Int? {
        guard names.count > Self.scanLimit else { return names.firstIndex(of: name) }
        return indexByName[name]
    }
}

/// The columns of a result: names in order, their types, and a lookup by name.
public struct PostgresColumns: Sendable {
    public let names: [String]
    public let types: [PostgresType]
    private let indexByName: [String: Int]

    init(names: [String], types: [PostgresType]) {
        self.names = names
        self.types = types
        var indexByName: [String: Int] = [:]
        for (index, name) in names.enumerated() where indexByName[name] == nil { indexByName[name] = index }
        self.indexByName = indexByName
    }

    public var count: Int { names.count }

    /// Position of the first column called `name`.
    public func index(of name: String) -> Int? { indexByName[name] }
}

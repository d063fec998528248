/// A console role: everyone authenticated is a viewer; members of `CONSOLE_OPERATOR_GROUPS` are operators and may act.
public enum ConsoleRole: String, Sendable, Codable, Equatable {
    case viewer, `operator`
}

/// Who is asking: the user name from the proxy header or the token's `sub`, their groups and the role they give.
public struct ConsoleUser: Sendable, Equatable, Codable {
    public let name: String
    public let groups: [String]
    public let role: ConsoleRole

    /// The role follows from the groups: any group in `operatorGroups` makes an operator.
    public init(name: String, groups: [String], operatorGroups: Set<String>) {
        self.name = name
        self.groups = groups
        role = groups.contains(where: operatorGroups.contains) ? .operator : .viewer
    }

    public var mayAct: Bool { role == .operator }
}

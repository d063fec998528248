/// Transaction isolation levels for `BEGIN ISOLATION LEVEL ...`.
public enum PostgresIsolation: String, Sendable {
    case repeatableRead = "REPEATABLE READ"
    case serializable = "SERIALIZABLE"
}

import Postgres

/// Tells a fault of the data (a row that cannot be read or planned: an undecodable value, a date PostgreSQL
/// cannot compute with) from a fault of the system (connection lost, timeout, Redis down). Only the first is
/// quarantined; the second is retried.
public enum RowFault {
    /// The reason to record when `error` is a fault of the rows being read; nil otherwise.
    public static func reason(of error: any Error) -> String? {
        guard let error = error as? PostgresError else { return nil }
        if error.code == .decodeFailed { return "decode: " + (error.message ?? error.what) }
        // Class 22: data exception (datetime overflow, invalid text representation, numeric out of range...).
        if error.code == .queryFailed, let state = error.sqlState, state.hasPrefix("22") {
            return "data (SQLSTATE \(state)): " + (error.message ?? error.what)
        }
        return nil
    }
}

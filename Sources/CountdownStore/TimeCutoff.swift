import Foundation
import Postgres

/// Where a listing starts: at a time, or a span before the database's now (so the database's clock measures it).
public enum TimeCutoff: Sendable, Equatable {
    case time(Date)
    case ago(seconds: Int)

    /// The cut-off in SQL, over the parameters `$1` and `$2` (`parameters`).
    static let sql = "coalesce($1::timestamptz, now() - make_interval(secs => $2::int))"

    /// The cut-off as the parameters `$1` and `$2` of `sql`.
    var parameters: [(any PostgresEncodable)?] {
        switch self {
        case .time(let date): [date, nil]
        case .ago(let seconds): [nil, seconds]
        }
    }
}

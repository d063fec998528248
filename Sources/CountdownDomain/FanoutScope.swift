/// Which devices of a stream a start fan-out covers: the T-60 job takes all, a backfill one device or one user.
public enum FanoutScope: Sendable, Equatable {
    case stream
    case device(String)
    case user(String)
}

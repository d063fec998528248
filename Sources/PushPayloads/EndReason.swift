/// Why a Live Activity is ended: the stream's new status (`endedReason` in the end push).
public enum EndReason: String, Sendable, Equatable, CaseIterable {
    case ready
    case started
    case cancelled
    case expired

    /// Whether tapping the ended activity should open the stream (ready, started) rather than the home page.
    public var opensStream: Bool {
        switch self {
        case .ready, .started: true
        case .cancelled, .expired: false
        }
    }
}

import BlockingIO
import JWT

/// Bearer tokens whose signature was already verified, with the caller they name: apps send the same token
/// for many requests, and a signature check (with JSON decoding of header and claims) costs more than the rest
/// of a registration. Only authentic tokens get in; their `exp`/`nbf` are still checked on every use.
/// Bounded: when full it starts over.
final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let caller: Caller
        let claims: JWTClaims
    }

    let capacity: Int
    private let entries = Locked([String: Entry]())

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    func lookup(_ token: String) -> Entry? {
        entries.withLock { $0[token] }
    }

    func insert(_ token: String, _ entry: Entry) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[token] = entry
        }
    }

    var count: Int { entries.withLock { $0.count } }
}

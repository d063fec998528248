import BlockingIO
import JWT

/// Bearer tokens whose signature was already verified, with the caller they name: apps send the same token
/// for many requests, and a signature check (with JSON decoding of header and claims) costs more than the rest
/// of a registration. Only authentic tokens get in; their `exp`/`nbf` (and maximum lifetime) are still
/// checked on every use. Each entry remembers the key-set generation it was verified under: after a key
/// rotation (`JWTKeySource` reloaded) an older entry is a miss, so the token is verified again under the new
/// keys (and refused if its key was withdrawn). Issuer, audience and `crit` are checked before a token gets
/// in and are fixed for the process's life. Bounded: when full it starts over.
final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let caller: Caller
        let claims: JWTClaims
        /// `JWTKeySource.Current.generation` at verification.
        let generation: Int
    }

    let capacity: Int
    private let entries = Locked([String: Entry]())

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// The entry for `token` when it was verified under key-set `generation`.
    func lookup(_ token: String, generation: Int) -> Entry? {
        entries.withLock { entries in
            guard let entry = entries[token] else { return nil }
            if entry.generation == generation { return entry }
            entries[token] = nil
            return nil
        }
    }

    func insert(_ token: String, _ entry: Entry) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[token] = entry
        }
    }

    var count: Int { entries.withLock { $0.count } }
}

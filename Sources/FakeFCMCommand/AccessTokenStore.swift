import Foundation
import Synchronization

/// Opaque access tokens the fake has issued, each with its expiry.
final class AccessTokenStore: Sendable {
    private struct State {
        var expiries: [String: Date] = [:]
        var issuedSincePurge = 0
    }

    let lifetime: Int
    private let state = Mutex(State())
    private let now: @Sendable () -> Date

    /// - Parameter lifetime: seconds a token stays valid.
    init(lifetime: Int, now: @escaping @Sendable () -> Date) {
        self.lifetime = lifetime
        self.now = now
    }

    /// A fresh token valid for `lifetime` seconds.
    func issue() -> String {
        var random = SystemRandomNumberGenerator()
        let token = "ya29.fake-" + (0..<4).map { _ in String(random.next() as UInt64, radix: 16) }.joined()
        let at = now()
        state.withLock { state in
            state.expiries[token] = at.addingTimeInterval(Double(lifetime))
            state.issuedSincePurge += 1
            if state.issuedSincePurge >= 1000 {
                state.expiries = state.expiries.filter { $0.value > at }
                state.issuedSincePurge = 0
            }
        }
        return token
    }

    /// Whether `token` was issued here and has not expired.
    func isValid(_ token: String) -> Bool {
        let at = now()
        return state.withLock { $0.expiries[token].map { $0 > at } ?? false }
    }

    /// Makes every token issued so far invalid (`DELETE /fake/tokens`): the next send with one gets 401.
    func revokeAll() {
        state.withLock { state in
            state.expiries = [:]
            state.issuedSincePurge = 0
        }
    }
}

import Foundation
import JSON
import JWT
import Synchronization

/// The ES256 provider token for APNs (`kid` = key id, `iss` = team id, `iat`), reused and re-signed every
/// `refreshInterval` (clamped to APNs' 20–60 minutes), never more often than every 20 minutes.
public final class APNsProviderToken: AccessTokenProviding {
    public static let minimumAge: TimeInterval = 20 * 60
    public static let maximumAge: TimeInterval = 60 * 60

    private struct Issued {
        let token: String
        let issuedAt: Date
    }

    private struct Claims: Encodable {
        let iss: String
        let iat: Int64
    }

    /// The key id (`kid`); one shared token per key id.
    public let keyID: String
    /// The refresh interval after clamping to 20–60 minutes.
    public var refreshAge: TimeInterval { refreshInterval }
    private let signer: JWTSigner
    private let header: [UInt8]
    private let teamID: String
    private let refreshInterval: TimeInterval
    private let now: @Sendable () -> Date
    private let onRefresh: @Sendable () -> Void
    private let state = Mutex<Issued?>(nil)

    /// Loads the `.p8` key.
    /// - Throws: `PushError.invalidCredentials` naming the key file and what is wrong with it, or
    ///   `.invalidConfiguration` for an empty key or team id.
    public init(
        keyFile: String, keyID: String, teamID: String, refreshInterval: Duration = .seconds(40 * 60),
        now: @escaping @Sendable () -> Date = { Date() }, onRefresh: @escaping @Sendable () -> Void = {}
    ) throws {
        guard !keyID.isEmpty, !keyID.contains(where: \.isWhitespace) else {
            throw PushError(.invalidConfiguration, "must be the key's id (10 characters)", field: "APNS_KEY_ID")
        }
        guard !teamID.isEmpty, !teamID.contains(where: \.isWhitespace) else {
            throw PushError(.invalidConfiguration, "must be the team id (10 characters)", field: "APNS_TEAM_ID")
        }
        do {
            signer = try JWTSigner.es256(privateKey: try AsymmetricKey.privateKey(file: keyFile), keyID: keyID)
        } catch let error as JWTError {
            throw PushError(.invalidCredentials, error.problem, file: keyFile)
        }
        var json = JSONWriter()
        json.object { header in
            header.member("alg", "ES256")
            header.member("kid", keyID)
        }
        header = json.bytes
        self.keyID = keyID
        self.teamID = teamID
        let seconds = Double(refreshInterval.components.seconds)
        self.refreshInterval = min(max(seconds, Self.minimumAge), Self.maximumAge)
        self.now = now
        self.onRefresh = onRefresh
    }

    public func accessToken() async throws -> String { try current() }

    /// The token to send now, signing a new one when the current one is `refreshInterval` old.
    public func current() throws -> String {
        let time = now()
        return try state.withLock { issued in
            if let existing = issued, time.timeIntervalSince(existing.issuedAt) < refreshInterval { return existing.token }
            let token = try sign(issuedAt: time)
            issued = Issued(token: token, issuedAt: time)
            return token
        }
    }

    /// Signs a new token issued at `time` (whole seconds), and counts the refresh.
    public func sign(issuedAt time: Date) throws -> String {
        let claims = try JSONEncoder().encode(Claims(iss: teamID, iat: Int64(time.timeIntervalSince1970)))
        let token = try signer.sign(headerJSON: header, claimsJSON: Array(claims))
        onRefresh()
        return token
    }

    /// The clock the tokens are stamped with.
    public var clock: @Sendable () -> Date { now }

    /// Drops `token` after APNs called it expired, unless it is younger than 20 minutes (re-signing sooner would
    /// earn `TooManyProviderTokenUpdates`).
    public func invalidate(_ token: String) async {
        let time = now()
        state.withLock { issued in
            if let existing = issued, existing.token == token, time.timeIntervalSince(existing.issuedAt) >= Self.minimumAge {
                issued = nil
            }
        }
    }
}

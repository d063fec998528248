import Foundation
import HTTPClient
import JWT

/// OAuth2 access tokens for FCM from a service account: signs an RS256 assertion, exchanges it at `token_uri`,
/// caches the token and refreshes it shortly before it expires. One refresh at a time, however many senders wait.
public actor FCMAccessTokenProvider: AccessTokenProviding {
    public static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// Assertion lifetime (Google accepts at most one hour).
    public static let assertionLifetime: TimeInterval = 3600

    private struct CachedToken: Sendable {
        let token: String
        let refreshAt: Date
        let expiresAt: Date
    }

    private struct Assertion: Encodable {
        let iss: String
        let scope: String
        let aud: String
        let iat: Int64
        let exp: Int64
    }

    private struct TokenAnswer: Decodable {
        let access_token: String
        let expires_in: Double
    }

    private struct TokenErrorAnswer: Decodable {
        let error: String?
        let error_description: String?
    }

    public let account: ServiceAccount
    private let signer: JWTSigner
    private let http: any HTTPRequestSending
    private let now: @Sendable () -> Date
    private let requestTimeout: Duration
    private let onRefresh: @Sendable (_ succeeded: Bool) -> Void
    private var cached: CachedToken?
    private var refreshing: Task<CachedToken, any Error>?
    private var earlyRefreshRetryAt: Date?
    private var lastDropped: Date?
    /// How long a failed early refresh waits before the next attempt while the old token is still valid.
    static let earlyRefreshRetryInterval: TimeInterval = 10
    /// How long after dropping a refused token another refused token is kept: a service refusing every token (a
    /// revoked or misconfigured account) costs one token exchange per interval, not one per batch.
    public static let minimumDropInterval: TimeInterval = 60

    /// - Parameters:
    ///   - now: the wall clock (assertion times and token expiry); tests inject their own.
    ///   - onRefresh: called after each token exchange, for a refresh counter metric.
    /// - Throws: `PushError.invalidCredentials` when the private key cannot sign RS256.
    public init(
        account: ServiceAccount, http: any HTTPRequestSending, now: @escaping @Sendable () -> Date = { Date() },
        requestTimeout: Duration = .seconds(10), onRefresh: @escaping @Sendable (_ succeeded: Bool) -> Void = { _ in }
    ) throws {
        do {
            let key = try AsymmetricKey.privateKey(pem: account.privateKeyPEM, source: "\(account.source) private_key")
            signer = try JWTSigner.rs256(privateKey: key, keyID: account.privateKeyID)
        } catch let error as JWTError {
            throw PushError(.invalidCredentials, error.problem, file: account.source, field: "private_key")
        }
        self.account = account
        self.http = http
        self.now = now
        self.requestTimeout = requestTimeout
        self.onRefresh = onRefresh
    }

    public func accessToken() async throws -> String {
        let current = now()
        if let cached, current < cached.refreshAt { return cached.token }
        // After a failed early refresh, keep using the still valid token for a while before trying again.
        if let cached, let retryAt = earlyRefreshRetryAt, current < retryAt, current < cached.expiresAt { return cached.token }
        do {
            let token = try await refresh().token
            earlyRefreshRetryAt = nil
            return token
        } catch {
            if let cached, now() < cached.expiresAt {
                earlyRefreshRetryAt = now().addingTimeInterval(Self.earlyRefreshRetryInterval)
                return cached.token
            }
            throw error
        }
    }

    /// Drops `token` after FCM refused it, unless another refused token was dropped less than
    /// `minimumDropInterval` ago (then the refusal is the account's, and a new token would be refused too).
    public func invalidate(_ token: String) {
        let time = now()
        guard cached?.token == token, lastDropped.map({ time.timeIntervalSince($0) >= Self.minimumDropInterval }) ?? true else { return }
        cached = nil
        lastDropped = time
    }

    private func refresh() async throws -> CachedToken {
        if let refreshing { return try await refreshing.value }
        let task = Task { try await self.exchange() }
        refreshing = task
        do {
            let token = try await task.value
            cached = token
            refreshing = nil
            onRefresh(true)
            return token
        } catch {
            refreshing = nil
            onRefresh(false)
            throw error
        }
    }

    private func exchange() async throws -> CachedToken {
        let issued = now()
        let iat = Int64(issued.timeIntervalSince1970)
        let assertion = try signer.sign(Assertion(
            iss: account.clientEmail, scope: Self.scope, aud: account.tokenURI, iat: iat, exp: iat + Int64(Self.assertionLifetime)))
        let form = "grant_type=\(Self.formEncode(Self.grantType))&assertion=\(Self.formEncode(assertion))"
        let request = HTTPRequest(
            method: .post, url: account.tokenURI, headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array(form.utf8), timeout: requestTimeout)
        let response: HTTPResponse
        do {
            response = try await http.send(request)
        } catch {
            throw PushError(.tokenEndpointUnavailable, "token exchange at \(account.tokenURI) failed: \(error)")
        }
        return try token(from: response, issued: issued)
    }

    private func token(from response: HTTPResponse, issued: Date) throws -> CachedToken {
        guard response.status == 200 else {
            let answer = try? JSONDecoder().decode(TokenErrorAnswer.self, from: Data(response.body))
            let detail = [answer?.error, answer?.error_description].compactMap { $0 }.joined(separator: ": ")
            let message = "token endpoint answered \(response.status)" + (detail.isEmpty ? "" : " (\(detail))")
            let temporary = response.status == 408 || response.status == 429 || response.status >= 500
            throw PushError(temporary ? .tokenEndpointUnavailable : .tokenRejected, message, file: account.source)
        }
        guard let answer = try? JSONDecoder().decode(TokenAnswer.self, from: Data(response.body)),
              !answer.access_token.isEmpty, answer.expires_in > 0
        else {
            throw PushError(.tokenEndpointUnavailable, "token endpoint answered 200 without access_token / expires_in")
        }
        // Refresh when 90% of the lifetime has passed, at most five minutes before expiry.
        let margin = min(300, answer.expires_in / 10)
        return CachedToken(
            token: answer.access_token, refreshAt: issued.addingTimeInterval(answer.expires_in - margin),
            expiresAt: issued.addingTimeInterval(answer.expires_in))
    }

    private static func formEncode(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

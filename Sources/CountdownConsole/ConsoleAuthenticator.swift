import CountdownAPI
import Foundation
import HTTPServer
import JWT

/// Who a request comes from (`CONSOLE_AUTH`).
///
/// - `proxy`: an authenticating reverse proxy sets the user and groups headers; they count only when the request's
///   peer is in `CONSOLE_TRUSTED_PROXIES`. From any other address the request is 401, whatever it sends.
/// - `jwt`: `Authorization: Bearer <token>` verified as the API verifies its tokens (the same `JWTKeySource`);
///   `sub` names the user and the `groups` claim (an array of strings) gives the groups.
public struct ConsoleAuthenticator: Sendable {
    public enum Mode: Sendable {
        case proxy(userHeader: String, groupsHeader: String, trusted: TrustedProxies)
        case jwt(JWTKeySource)
    }

    public let mode: Mode
    public let operatorGroups: Set<String>

    public init(mode: Mode, operatorGroups: Set<String>) {
        self.mode = mode
        self.operatorGroups = operatorGroups
    }

    /// Longest accepted user name.
    static let maxNameLength = 256

    /// The user, or `ConsoleError` `.unauthorized` saying what is missing (never what a token holds).
    public func user(of request: HTTPRequest) throws(ConsoleError) -> ConsoleUser {
        switch mode {
        case .proxy(let userHeader, let groupsHeader, let trusted):
            guard trusted.isTrusted(TrustedProxies.address(ofPeer: request.remoteAddress)) else {
                throw ConsoleError(.unauthorized, "requests must come through the authenticating proxy")
            }
            // A header sent twice could be one line from the proxy and one from the client: neither is believed.
            for header in [userHeader, groupsHeader] where request.headers.values(header).count > 1 {
                throw ConsoleError(.unauthorized, "the request has more than one \(header) header")
            }
            guard let name = request.headers[userHeader]?.trimmingCharacters(in: .whitespaces), !name.isEmpty,
                  name.count <= Self.maxNameLength, !Self.hasControlCharacter(name) else {
                throw ConsoleError(.unauthorized, "the proxy sent no usable user (\(userHeader))")
            }
            let groups = (request.headers[groupsHeader] ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !groups.contains(where: Self.hasControlCharacter) else {
                throw ConsoleError(.unauthorized, "the proxy sent a group with a control character (\(groupsHeader))")
            }
            return ConsoleUser(name: name, groups: groups, operatorGroups: operatorGroups)
        case .jwt(let keys):
            guard let header = request.headers["Authorization"] else {
                throw ConsoleError(.unauthorized, "this console needs an Authorization: Bearer <token> header")
            }
            let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw ConsoleError(.unauthorized, "the Authorization header must be \"Bearer <token>\"")
            }
            let verifier = keys.current().verifier
            let token = String(parts[1].drop { $0 == " " })
            guard token.utf8.count <= verifier.maxTokenBytes, let jwt = try? verifier.verify(token) else {
                throw ConsoleError(.unauthorized, "the bearer token is not valid here")
            }
            guard let subject = jwt.claims.sub, !subject.isEmpty, subject.count <= Self.maxNameLength,
                  !Self.hasControlCharacter(subject) else {
                throw ConsoleError(.unauthorized, "the token has no usable sub")
            }
            let groups = ((try? jwt.decodeClaims(as: GroupsClaim.self))?.groups ?? []).filter { !Self.hasControlCharacter($0) }
            return ConsoleUser(name: subject, groups: groups, operatorGroups: operatorGroups)
        }
    }

    private struct GroupsClaim: Decodable {
        let groups: [String]

        private enum CodingKeys: String, CodingKey { case groups }

        init(from decoder: any Decoder) throws {
            groups = (try? decoder.container(keyedBy: CodingKeys.self).decodeIfPresent([String].self, forKey: .groups)) ?? []
        }
    }

    /// A control character (NUL above all, which PostgreSQL text cannot hold) is in no user or group name of ours,
    /// as the API refuses it in a `sub`.
    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}

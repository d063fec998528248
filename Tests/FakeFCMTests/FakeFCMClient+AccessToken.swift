import Foundation
import TestSupport

extension FakeFCMClient {
    /// A valid access token for the fake's account.
    func accessToken(for fake: FakeFCMProcess) async throws -> String {
        let answer = try await exchange(assertion: try Assertion.sign(for: fake))
        guard answer.status == 200, let token = answer.json["access_token"] as? String else {
            throw UnexpectedAnswer(what: "token exchange", answer: answer.text)
        }
        return token
    }
}

import Foundation
import Redis
import Testing

@Suite struct RedisReplyTimeTests {
    @Test func aTimeReplyIsTheServersTime() throws {
        let reply = RedisReply.array([.bulk(Array("1765000000".utf8)), .bulk(Array("250000".utf8))])
        #expect(try reply.serverTime() == Date(timeIntervalSince1970: 1_765_000_000.25))
    }

    @Test(arguments: [
        RedisReply.null, .array([]), .array([.bulk(Array("1765000000".utf8))]),
        .array([.bulk(Array("soon".utf8)), .bulk(Array("0".utf8))]), .bulk(Array("1765000000".utf8)),
    ])
    func anyOtherShapeIsAnUnexpectedReply(reply: RedisReply) {
        do {
            _ = try reply.serverTime()
            Issue.record("expected \(reply) to be refused")
        } catch {
            #expect(error.code == .unexpectedReply && error.context == "TIME")
        }
    }
}

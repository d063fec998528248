import Foundation
import Testing
import TestSupport

/// Reading the fake FCM's debug log into sends (`CountdownSystem.fakeRequestLog`).
@Suite struct FakeSendTests {
    @Test func acceptedAndFaultedSendsAreRead() {
        let accepted = FakeSend.parse(logLine: #"{"ts":"2026-01-02T03:04:05.678Z","level":"debug","msg":"message accepted","event":"start","token":"…00000042","name":"n"}"#)
        #expect(abs((accepted?.at ?? 0) - 1_767_323_045.678) < 0.0005)
        #expect(accepted?.token == "00000042")
        #expect(accepted?.status == 200)
        let refused = FakeSend.parse(logLine: #"{"ts":"2026-01-02T03:04:06.000Z","level":"debug","msg":"send failed by fault","status":"503","token":"…abcdefgh"}"#)
        #expect(refused?.status == 503)
        #expect(refused?.token == "abcdefgh")
    }

    @Test func otherLinesAreSkipped() {
        #expect(FakeSend.parse(logLine: #"{"ts":"2026-01-02T03:04:05.678Z","level":"info","msg":"listening"}"#) == nil)
        #expect(FakeSend.parse(logLine: "not json") == nil)
        #expect(FakeSend.parse(logLine: #"{"msg":"message accepted"}"#) == nil)
    }
}

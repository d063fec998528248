@testable import countdown_bench
import Testing

@Suite struct CPUSamplerTests {
    @Test func readsTheRowsOfAPerfReport() {
        let row = CPUSampler.row("    12.34%  countdown-worker        [.] Push.FCMTransport.send(_:) async")
        #expect(row?.percent == 12.34 && row?.dso == "countdown-worker" && row?.symbol == "Push.FCMTransport.send(_:) async")
        #expect(CPUSampler.row("     0.50%  [kernel.kallsyms]       [k] sendto")?.dso == "[kernel.kallsyms]")
        #expect(CPUSampler.row("     5.45%  libswiftCore.so       [.] swift_retain                          -      -            ")?.symbol
            == "swift_retain")
        #expect(CPUSampler.row("# Overhead  Shared Object  Symbol") == nil)
        #expect(CPUSampler.row("") == nil)
    }
}

@testable import countdown_bench
import Foundation
import Testing

@Suite struct ProcStatTests {
    @Test func readsTheParentFromAStatLineWhoseCommandHoldsSpacesAndParentheses() {
        #expect(ProcStat.parent(statLine: "4242 (post (gres) x) S 17 4242 4242 0 -1 4194560 100 0 0 0 5 3 2 1 20 0 1 0") == 17)
        #expect(ProcStat.parent(statLine: "garbage") == nil)
    }

    @Test func readsThisProcesssParent() {
        #expect(ProcStat.parent(of: getpid()) == getppid())
        #expect(ProcStat.children(of: getppid()).contains(getpid()))
    }
}

@Suite struct CPUSamplerTests {
    @Test func readsTheRowsOfAPerfReport() {
        let row = CPUSampler.row("    12.34%  countdown-worker        [.] Push.FCMTransport.send(_:) async")
        #expect(row?.percent == 12.34 && row?.dso == "countdown-worker" && row?.symbol == "Push.FCMTransport.send(_:) async")
        #expect(CPUSampler.row("     0.50%  [kernel.kallsyms]       [k] sendto")?.dso == "[kernel.kallsyms]")
        #expect(CPUSampler.row("# Overhead  Shared Object  Symbol") == nil)
        #expect(CPUSampler.row("") == nil)
    }
}

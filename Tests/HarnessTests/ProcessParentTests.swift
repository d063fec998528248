import Foundation
import Testing
import TestSupport

@Suite struct ProcessParentTests {
    @Test func readsTheParentFromAStatLineWhoseCommandHoldsSpacesAndParentheses() {
        #expect(ProcessUsage.parent(statLine: "4242 (post (gres) x) S 17 4242 4242 0 -1 4194560 100 0 0 0 5 3 2 1 20 0 1 0") == 17)
        #expect(ProcessUsage.parent(statLine: "garbage") == nil)
    }

    @Test func readsThisProcesssParent() {
        #expect(ProcessUsage.parent(of: getpid()) == getppid())
    }
}

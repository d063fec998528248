import Testing
@testable import JWT

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLength() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 250) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("="))
            #expect(!encoded.contains("+") && !encoded.contains("/"))
            #expect(Base64URL.decode(encoded) == bytes)
        }
    }

    @Test func matchesRFC4648Vectors() {
        #expect(Base64URL.encode(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Base64URL.encode(Array("fooba".utf8)) == "Zm9vYmE")
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("Zm9vYg==") == Array("foob".utf8))
    }

    @Test func rejectsWhatIsNotBase64URL() {
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("ab/c") == nil)
        #expect(Base64URL.decode("abcde") == nil)
        #expect(Base64URL.decode("a b") == nil)
        // "-_9" has non-zero leftover bits: a second spelling of [0xFB, 0xFF] is refused.
        #expect(Base64URL.decode("-_9") == nil)
    }
}

// Prints the private key of one alias of a PKCS12 keystore as PEM (PKCS #8), which keytool cannot:
// the local stack's client key for Node's TLS. Run from source: java PemKey.java STORE PASSWORD ALIAS
import java.io.FileInputStream;
import java.security.Key;
import java.security.KeyStore;
import java.util.Base64;

public class PemKey {
  public static void main(String[] args) throws Exception {
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (FileInputStream in = new FileInputStream(args[0])) {
      store.load(in, args[1].toCharArray());
    }
    Key key = store.getKey(args[2], args[1].toCharArray());
    String body = Base64.getMimeEncoder(64, "\n".getBytes()).encodeToString(key.getEncoded());
    System.out.print("-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n");
  }
}

// ParseTls: the `server.tls` section (config.h), read through a strict YamlMap. The files it
// names are checked when the server loads them (http/tls_context.h), so that a reload reports
// the same errors as start-up.
#include "config/config.h"
#include "config/yaml_map.h"

namespace turnpike::config {
namespace {

TlsCertificateFiles ParsePair(const YamlMap& m) {
  TlsCertificateFiles pair;
  m.Require("cert_file");
  m.Require("key_file");
  pair.cert_file = m.String("cert_file", "");
  pair.key_file = m.String("key_file", "");
  if (pair.cert_file.empty()) FailAt(m.KeyPath("cert_file"), "must name a file");
  if (pair.key_file.empty()) FailAt(m.KeyPath("key_file"), "must name a file");
  return pair;
}

}  // namespace

TlsConfig ParseTls(const YamlMap& server) {
  TlsConfig t;
  const YAML::Node node = server.Child("tls");
  if (!node.IsDefined() || node.IsNull()) return t;
  const std::string path = server.KeyPath("tls");
  YamlMap m(node, path,
            {"cert_file", "key_file", "certificates", "min_version", "ciphers", "client_ca_file",
             "require_client_cert", "handshake_timeout"});
  const bool has_pair = !m.String("cert_file", "").empty() || !m.String("key_file", "").empty();
  if (has_pair) t.certificates.push_back(ParsePair(m));

  const YAML::Node list = m.Child("certificates");
  if (list.IsDefined() && !list.IsNull()) {
    if (!list.IsSequence()) FailAt(m.KeyPath("certificates"), "expected a list", list);
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string item = m.KeyPath("certificates") + "[" + std::to_string(i) + "]";
      t.certificates.push_back(ParsePair(YamlMap(list[i], item, {"cert_file", "key_file"})));
    }
  }
  if (t.certificates.empty()) {
    FailAt(path, "needs cert_file and key_file, or a non-empty certificates list", node);
  }

  t.min_version = m.String("min_version", t.min_version);
  if (t.min_version != "1.2" && t.min_version != "1.3") {
    FailAt(m.KeyPath("min_version"), "must be \"1.2\" or \"1.3\"");
  }
  t.ciphers = m.String("ciphers", t.ciphers);
  t.client_ca_file = m.String("client_ca_file", t.client_ca_file);
  t.require_client_cert = m.Bool("require_client_cert", t.require_client_cert);
  if (t.require_client_cert && t.client_ca_file.empty()) {
    FailAt(m.KeyPath("require_client_cert"), "needs client_ca_file (the CAs to verify against)");
  }
  t.handshake_timeout = m.Duration("handshake_timeout", t.handshake_timeout);
  if (t.handshake_timeout <= Millis(0)) {
    FailAt(m.KeyPath("handshake_timeout"), "must be greater than 0");
  }
  return t;
}

}  // namespace turnpike::config

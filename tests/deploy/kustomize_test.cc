// Renders deploy/kubernetes/overlays/example with `kubectl kustomize` (no cluster needed) and
// checks what a wrong manifest would break in a cluster: probes on the right paths, a grace
// period that covers preStop + the configured drain, selectors that select the pods, every
// ${VAR} of the config provided by the container's env, and a config the binary accepts.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

struct Output {
  int status = -1;
  std::string out;
};

Output Capture(const std::string& command) {
  Output run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string Kubectl() {
  const char* env = std::getenv("KUBECTL");
  return env != nullptr ? env : "kubectl";
}

// "25s", "2m", "500ms" -> seconds (rounded up).
int Seconds(const std::string& d) {
  std::smatch m;
  if (!std::regex_match(d, m, std::regex(R"((\d+)(ms|s|m|h))"))) return -1;
  long v = std::stol(m[1]);
  if (m[2] == "ms") return static_cast<int>((v + 999) / 1000);
  if (m[2] == "m") return static_cast<int>(v * 60);
  if (m[2] == "h") return static_cast<int>(v * 3600);
  return static_cast<int>(v);
}

class RenderedExample : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Output run = Capture(Kubectl() + " kustomize " TURNPIKE_SOURCE_DIR
                                     "/deploy/kubernetes/overlays/example 2>&1");
    ASSERT_EQ(run.status, 0) << "kubectl kustomize failed (scripts/deps.sh --test installs "
                                "Debian's kubernetes-client):\n"
                             << run.out;
    for (const YAML::Node& doc : YAML::LoadAll(run.out)) {
      docs_[doc["kind"].as<std::string>() + "/" + doc["metadata"]["name"].as<std::string>()] = doc;
    }
  }

  static YAML::Node Find(const std::string& kind) {
    for (const auto& [key, doc] : docs_) {
      if (key.rfind(kind + "/", 0) == 0) return doc;
    }
    ADD_FAILURE() << "no " << kind << " rendered";
    return YAML::Node();
  }

  static YAML::Node Container() {
    return Find("Deployment")["spec"]["template"]["spec"]["containers"][0];
  }

  static YAML::Node Config() {
    YAML::Node map = Find("ConfigMap");
    return YAML::Load(map["data"]["turnpike.yaml"].as<std::string>());
  }

  static std::string ConfigText() {
    return Find("ConfigMap")["data"]["turnpike.yaml"].as<std::string>();
  }

  // Every label of `selector` is on the pod template.
  static void ExpectSelectsPods(const YAML::Node& selector) {
    YAML::Node labels = Find("Deployment")["spec"]["template"]["metadata"]["labels"];
    ASSERT_TRUE(selector.IsMap());
    ASSERT_GT(selector.size(), 0u);
    for (const auto& kv : selector) {
      const auto key = kv.first.as<std::string>();
      ASSERT_TRUE(labels[key].IsDefined()) << key;
      EXPECT_EQ(labels[key].as<std::string>(), kv.second.as<std::string>()) << key;
    }
  }

  static inline std::map<std::string, YAML::Node> docs_;
};

TEST_F(RenderedExample, RendersEveryKindInTheOverlaysNamespace) {
  std::set<std::string> kinds;
  for (const auto& [key, doc] : docs_) {
    kinds.insert(doc["kind"].as<std::string>());
    EXPECT_EQ(doc["metadata"]["namespace"].as<std::string>(""), "turnpike") << key;
  }
  EXPECT_EQ(kinds, (std::set<std::string>{"ConfigMap", "Deployment", "HorizontalPodAutoscaler",
                                          "PodDisruptionBudget", "Service"}));
}

TEST_F(RenderedExample, DeploymentProbesAndImage) {
  YAML::Node c = Container();
  EXPECT_EQ(c["image"].as<std::string>(), "registry.example.com/platform/turnpike:0.1.0");
  EXPECT_EQ(Find("Deployment")["spec"]["replicas"].as<int>(), 3);
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(c["startupProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  // The probes and the Service name the port; it is the one the config listens on.
  EXPECT_EQ(c["ports"][0]["name"].as<std::string>(), "http");
  const std::string listen = Config()["server"]["listen"].as<std::string>();
  EXPECT_EQ(listen.substr(listen.rfind(':') + 1), c["ports"][0]["containerPort"].as<std::string>());
}

TEST_F(RenderedExample, GracePeriodCoversPreStopAndDrain) {
  YAML::Node command = Container()["lifecycle"]["preStop"]["exec"]["command"];
  ASSERT_EQ(command[0].as<std::string>(), "sleep");
  const int pre_stop = std::stoi(command[1].as<std::string>());
  const int drain = Seconds(Config()["server"]["timeouts"]["drain"].as<std::string>("30s"));
  ASSERT_GT(drain, 0);
  const int grace =
      Find("Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"].as<int>();
  EXPECT_GE(grace, pre_stop + drain + 5) << "preStop " << pre_stop << "s + drain " << drain << "s";
}

TEST_F(RenderedExample, ConfigMapIsTheMountedOneAndEveryVariableIsProvided) {
  const std::string map_name = Find("ConfigMap")["metadata"]["name"].as<std::string>();
  bool mounted = false;
  for (const auto& v : Find("Deployment")["spec"]["template"]["spec"]["volumes"]) {
    if (v["configMap"]) mounted |= v["configMap"]["name"].as<std::string>() == map_name;
  }
  EXPECT_TRUE(mounted) << "the Deployment does not mount " << map_name;

  std::set<std::string> env;
  for (const auto& e : Container()["env"]) {
    env.insert(e["name"].as<std::string>());
    if (e["valueFrom"]) {
      EXPECT_TRUE(e["valueFrom"]["secretKeyRef"]["name"].IsDefined()) << e["name"];
    }
  }
  const std::string text = ConfigText();
  std::regex var(R"(\$\{([A-Z0-9_]+)(:-[^}]*)?\})");
  int vars = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), var); it != std::sregex_iterator();
       ++it) {
    ++vars;
    if ((*it)[2].matched) continue;  // has a default
    EXPECT_TRUE(env.count((*it)[1].str())) << (*it)[1] << " is used by turnpike.yaml but not set";
  }
  EXPECT_GE(vars, 3);
  YAML::Node config = Config();
  EXPECT_EQ(config["store"]["engine"].as<std::string>(), "postgres");
  EXPECT_TRUE(config["redis"]["url"].IsDefined());
}

TEST_F(RenderedExample, ServicePdbAndHpaPointAtTheDeployment) {
  YAML::Node service = Find("Service");
  ExpectSelectsPods(service["spec"]["selector"]);
  EXPECT_EQ(service["spec"]["ports"][0]["targetPort"].as<std::string>(), "http");
  ExpectSelectsPods(Find("PodDisruptionBudget")["spec"]["selector"]["matchLabels"]);
  YAML::Node hpa = Find("HorizontalPodAutoscaler");
  EXPECT_EQ(hpa["spec"]["scaleTargetRef"]["kind"].as<std::string>(), "Deployment");
  EXPECT_EQ(hpa["spec"]["scaleTargetRef"]["name"].as<std::string>(),
            Find("Deployment")["metadata"]["name"].as<std::string>());
  std::set<std::string> metrics;
  for (const auto& m : hpa["spec"]["metrics"]) {
    if (m["type"].as<std::string>() == "Resource")
      metrics.insert(m["resource"]["name"].as<std::string>());
    if (m["type"].as<std::string>() == "Pods")
      metrics.insert(m["pods"]["metric"]["name"].as<std::string>());
  }
  EXPECT_EQ(metrics, (std::set<std::string>{"cpu", "turnpike_requests_in_flight"}));
  EXPECT_LE(hpa["spec"]["minReplicas"].as<int>(), hpa["spec"]["maxReplicas"].as<int>());
}

// `turnpike validate` accepts the rendered config, with the env the Deployment sets.
TEST_F(RenderedExample, TheConfigIsOneTheBinaryAccepts) {
  char path[] = "/tmp/turnpike-k8s-XXXXXX.yaml";
  int fd = mkstemps(path, 5);
  ASSERT_GE(fd, 0);
  const std::string text = ConfigText();
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  std::string env;
  for (const auto& e : Container()["env"]) {
    const auto name = e["name"].as<std::string>();
    std::string value = "set";
    if (name.find("DATABASE") != std::string::npos)
      value = "postgresql://turnpike@127.0.0.1/turnpike";
    if (name.find("REDIS") != std::string::npos) value = "redis://127.0.0.1:6379/0";
    env += name + "=" + value + " ";
  }
  Output run = Capture("env " + env + TURNPIKE_BIN " validate --config " + path + " 2>&1");
  unlink(path);
  EXPECT_EQ(run.status, 0) << run.out;
}

}  // namespace

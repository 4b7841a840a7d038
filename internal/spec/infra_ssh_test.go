package spec

import (
	"strings"
	"testing"
)

const sshBase = "name: camp\ntarget: {type: fake}\nworkload: {ycsb: c}\nload: {model: open, rates: [1]}\nphases: {measure: 10s}\n"

// The infra: section: a valid fleet decodes with the section's connection
// fields as the hosts' defaults; each mistake is one sentence at its field.
func TestInfraSSHSection(t *testing.T) {
	s, err := Parse("a.yaml", []byte(sshBase+`infra:
  provider: ssh
  user: admin
  key_file: keys/id
  passphrase_env: KEY_PASS
  hosts:
    - {name: db1, address: 10.0.0.5, type: small, region: eu-west}
    - {name: db2, address: db2.example, port: 2222, user: root, agent: true, price_per_hour: 0.5}
events:
  - {at: 2s, action: stop, host: db1}
  - {at: 3s, action: partition, groups: [[db1], [client, db2]]}
`))
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := s.Infra.Conn(s.Infra.Hosts[0]), s.Infra.Conn(s.Infra.Hosts[1])
	if c1.User != "admin" || c1.KeyFile != "keys/id" || c1.PassphraseEnv != "KEY_PASS" || c1.Port != 22 {
		t.Errorf("db1 takes the defaults: %+v", c1)
	}
	if c2.User != "root" || c2.KeyFile != "" || c2.Agent == nil || !*c2.Agent || c2.Port != 2222 {
		t.Errorf("db2 has its own: %+v", c2)
	}
	if s.Infra.Hosts[0].Region != "eu-west" || s.Infra.Hosts[1].Region != "" {
		t.Errorf("regions: %q, %q", s.Infra.Hosts[0].Region, s.Infra.Hosts[1].Region)
	}
	for _, c := range []struct{ src, path, want string }{
		{"infra: {provider: ssh, key_file: k, hosts: [{name: a, address: x, region: eu_west}]}", "infra.hosts[0].region", `"eu_west" is not a region label`},
		{"infra: {provider: ssh, key_file: k, hosts: [{name: a, address: x, region: a-region-name-too-long}]}", "infra.hosts[0].region", "at most 15"},
		{"infra: {provider: aws, hosts: [{name: a, address: x, key_file: k}]}", "infra.provider", "not a provider"},
		{"infra: {provider: ssh}", "infra.hosts", "at least one host"},
		{"infra: {provider: ssh, hosts: [{name: a, address: x}]}", "infra.hosts[0]", "key_file"},
		{"infra: {provider: ssh, key_file: k, hosts: [{name: a, address: root@x}]}", "infra.hosts[0].address", "without user@"},
		{"infra: {provider: ssh, key_file: k, hosts: [{name: a, address: x}, {name: a, address: y}]}", "infra.hosts[1].name", "twice"},
		{"infra: {provider: ssh, key_file: k, hosts: [{name: a, address: x, type: huge9}]}", "infra.hosts[0].type", "not in the catalog"},
		{"infra: {provider: ssh, key_file: k, passphrase_env: A, passphrase_file: b, hosts: [{name: a, address: x}]}", "infra.passphrase_env", "not both"},
		{"infra: {provider: ssh, key_file: k, known_hosts: f, insecure_ignore_host_key: true, hosts: [{name: a, address: x}]}", "infra.insecure_ignore_host_key", "not read"},
		{"infra: {provider: ssh, key_file: k, hosts: [{name: a, address: x}]}\nlab: {hosts: [{name: db1, type: small}]}", "infra", "not both"},
		{"infra: {provider: ssh, key_file: k, hosts: [{name: a, address: x}]}\nevents: [{at: 1s, action: set_cpu, host: a, vcpus: 1}]", "events[0].action", "not applied to ssh hosts"},
		{"infra: {provider: ssh, key_file: k, hosts: [{name: a, address: x}]}\nevents: [{at: 1s, action: kill, host: b}]", "events[0].host", "not a host of infra"},
		{"infra: {provider: ssh, key_file: k, hosts: [{name: a, address: x}]}\nevents: [{at: 1s, action: partition, groups: [[a], [c]]}]", "events[0].groups[1]", "not a host of infra"},
	} {
		_, err := Parse("a.yaml", []byte(sshBase+c.src+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.path+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s: ...%s", c.src, err, c.path, c.want)
		}
	}
}

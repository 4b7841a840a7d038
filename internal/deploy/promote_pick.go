package deploy

import "fmt"

// replicaToPromote is the index of the replica a promote names (by node or
// host name; the first replica when name is empty), or an error that lists
// the replicas there are. group says what the nodes are ("cluster",
// "replica set") in that error.
func replicaToPromote(nodes []Node, name, group string) (int, error) {
	var replicas []string
	for i, n := range nodes {
		if n.Role != "replica" {
			continue
		}
		if name == "" || n.Name == name || n.Host != "" && n.Host == name {
			return i, nil
		}
		replicas = append(replicas, n.Name)
	}
	if len(replicas) == 0 {
		return -1, fmt.Errorf("the %s has no replica to promote", group)
	}
	return -1, fmt.Errorf("%q is not a replica of the %s; its replicas are %v", name, group, replicas)
}

// Command hostapiclient is a program outside ansight-go that drives a running host through
// its public API alone (package hostapi): it lists the host's sessions. It links no host,
// recorder or database (TestContractClientsLinkNoHost).
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/ansight-go/ansight/hostapi"
)

func main() {
	dir, err := hostapi.DefaultStateDir()
	if err != nil {
		log.Fatal(err)
	}
	sessions, err := hostapi.NewClient(dir + "/" + hostapi.SocketName).Sessions(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range sessions.Sessions {
		fmt.Println(s.ID, s.AppID, s.State)
	}
}

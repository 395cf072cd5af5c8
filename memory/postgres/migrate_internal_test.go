package postgres

import "testing"

func TestMigrationsNumbered(t *testing.T) {
	all, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || all[0].name != "0001_init" {
		t.Fatalf("migrations %+v", all)
	}
}

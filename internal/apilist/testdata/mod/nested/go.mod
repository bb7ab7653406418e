module "example.com/nested" // a nested module

go 1.25

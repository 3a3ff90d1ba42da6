"""Makes the local S3 server (moto) check credentials like S3: creates the warehouse bucket, an IAM
user allowed every S3 action and its access key, and an administrator allowed everything (the auth
front makes keys with it), then turns moto's authentication on (it is off by default: moto
answers any signature). Prints the keys as JSON for the stack's endpoints.json.

With `mint`, makes a user allowed every S3 action on the objects under one prefix only (and to list
the bucket under it), as a catalog that vends each table a key for its own location does, and
prints its key as JSON.

Usage: s3_users.py ENDPOINT BUCKET
       s3_users.py mint ENDPOINT ADMIN_KEY_ID ADMIN_SECRET USER BUCKET PREFIX
"""

import json
import sys
import urllib.request

import boto3


def allow(iam, user, name, statements):
    iam.put_user_policy(UserName=user, PolicyName=name, PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": statements}))


def setup(endpoint, bucket):
    # Before authentication is on, moto takes any credentials: these only sign the setup calls.
    signing = {"endpoint_url": endpoint, "region_name": "us-east-1", "aws_access_key_id": "setup", "aws_secret_access_key": "setup"}
    s3 = boto3.client("s3", **signing)
    existing = [b["Name"] for b in s3.list_buckets().get("Buckets", [])]
    if bucket not in existing:
        s3.create_bucket(Bucket=bucket)
    iam = boto3.client("iam", **signing)
    iam.create_user(UserName="floe")
    allow(iam, "floe", "s3-all", [{"Effect": "Allow", "Action": ["s3:*"], "Resource": "*"}])
    key = iam.create_access_key(UserName="floe")["AccessKey"]
    iam.create_user(UserName="stack-admin")
    allow(iam, "stack-admin", "all", [{"Effect": "Allow", "Action": ["*"], "Resource": "*"}])
    admin = iam.create_access_key(UserName="stack-admin")["AccessKey"]
    # From now on every request must be signed by a known key with the permission for its action.
    request = urllib.request.Request(f"{endpoint}/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        answer.read()
    print(
        json.dumps(
            {
                "accessKeyId": key["AccessKeyId"],
                "secretAccessKey": key["SecretAccessKey"],
                "admin": {"accessKeyId": admin["AccessKeyId"], "secretAccessKey": admin["SecretAccessKey"]},
            }
        )
    )


def mint(endpoint, admin_key, admin_secret, user, bucket, prefix):
    iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=admin_key, aws_secret_access_key=admin_secret)
    iam.create_user(UserName=user)
    # objects under the prefix, and listing the bucket under it only (as per-table vended keys do)
    own = {"Effect": "Allow", "Action": ["s3:*"], "Resource": f"arn:aws:s3:::{bucket}/{prefix}*"}
    listing = {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": f"arn:aws:s3:::{bucket}", "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}}
    allow(iam, user, "own-prefix", [own, listing])
    key = iam.create_access_key(UserName=user)["AccessKey"]
    print(json.dumps({"accessKeyId": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}))


if __name__ == "__main__":
    if sys.argv[1] == "mint":
        mint(*sys.argv[2:8])
    else:
        setup(sys.argv[1], sys.argv[2])
